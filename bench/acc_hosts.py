#!/usr/bin/env python3
"""acc_hosts: the accumulate paths (window info key shim_accumulate: native,
caller, owner) on one machine and between two emulated hosts, with one
markdown summary.

  1. On this machine (no vcluster), 2 ranks on one node: acc_latency
     (latency and bandwidth, 8 B .. 1 MiB; owner-computes works in shared
     memory here), acc_latency --server-idle (CPU of the threads other than
     the main one while the ranks sleep; again with SHIM_SERVER=0 as the
     baseline of MPI's own threads), fock_build.
  2. On a vcluster from bench/two_hosts.spec (2 hosts, links not rate limited; UCX
     over TCP), one rank per host: acc_latency (the 1 MiB bandwidth is the
     target: owner >= 1.5 x caller and >= native), acc_latency --busy-target
     (origin latency while the target computes without calling MPI),
     acc_latency --server-idle (also with SHIM_SERVER=0), fock_build.
Each run's header and rows are printed as they come, then markdown tables of
the key figures. The cluster is brought up before the cluster runs and always
taken down at the end, also after a failure, Ctrl-C or SIGTERM (its name is
VCLUSTER_NAME, default "accbench"; two runs at once need different names).
Needs root for the cluster; about 4 minutes on 2 cores (--quick: about 2).

  bench/acc_hosts.py [--build DIR] [--no-cluster] [--quick] [--busy S] [--idle S]
"""
import argparse
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import host_runs  # noqa: E402
from host_runs import Failure, Result, format_size  # noqa: E402

REPO = os.path.dirname(HERE)
SPEC = os.path.join(HERE, "two_hosts.spec")
VCLUSTER = os.path.join(REPO, "tools", "vcluster")
CLUSTER = os.environ.get("VCLUSTER_NAME", "accbench")
PROGRAMS = ["acc_latency", "fock_build"]
PATHS = ["native", "caller", "owner"]
# A hung run must not keep the cluster up forever.
RUN_TIMEOUT = 900


def run(command, env, what):
    return host_runs.run(command, env, what, RUN_TIMEOUT)


def local_env():
    # One node: the two ranks share memory, as a real node's would.
    env = dict(os.environ)
    env.pop("SHIM_NODE_SIZE", None)
    return env


def cluster_env():
    env = dict(os.environ, VCLUSTER_NAME=CLUSTER)
    env.pop("VCLUSTER_PRELOAD", None)
    env.pop("SHIM_NODE_SIZE", None)
    return env


def vcluster(*args):
    return run([VCLUSTER, *args], cluster_env(), f"vcluster {args[0]}")


def bench(args, program, flags, where, title, extra_env):
    path = os.path.join(args.build, "bench", program)
    command = ["mpiexec", "-n", "2", path, "--csv", *flags]
    start = time.monotonic()
    if where == "local":
        output = run(command, dict(local_env(), **extra_env), title)
    else:
        # Hydra hands mpiexec's environment on to the ranks on every host.
        output = run([VCLUSTER, "run", "--", *command], dict(cluster_env(), **extra_env), title)
    result = Result(f"{title}  [{time.monotonic() - start:.0f} s]", output)
    result.show()
    return result


def plan(args):
    """(key, program, flags, where, title, extra environment) of every run, in order."""
    quick = args.quick
    rounds = ["--rounds", "3"] if quick else []
    latency_sizes = ["--sizes", "8,64,1K,4K,64K,1M"] if quick else []
    busy_sizes = ["--sizes", "8,64K,1M"] if quick else []
    idle = ["--server-idle", str(args.idle)]
    fock = ["--paths", ",".join(PATHS), "--builds", "3" if quick else "5"]
    no_server = {"SHIM_SERVER": "0"}
    runs = [
        ("local latency", "acc_latency", [*latency_sizes, *rounds], "local",
         "one machine, 2 ranks on one node: acc_latency", {}),
        ("local idle", "acc_latency", idle, "local", "one machine, 2 ranks on one node: acc_latency --server-idle", {}),
        ("local idle noserver", "acc_latency", idle, "local",
         "one machine, 2 ranks on one node: acc_latency --server-idle, SHIM_SERVER=0", no_server),
        ("local fock", "fock_build", fock, "local", "one machine, 2 ranks on one node: fock_build", {}),
    ]
    if not args.no_cluster:
        runs += [
            ("hosts latency", "acc_latency", [*latency_sizes, *rounds], "cluster",
             "2 emulated hosts (TCP, no rate limit), 1 rank each: acc_latency", {}),
            ("hosts busy", "acc_latency", ["--busy-target", str(args.busy), *busy_sizes, *rounds], "cluster",
             f"2 emulated hosts, 1 rank each: acc_latency --busy-target {args.busy}", {}),
            ("hosts idle", "acc_latency", idle, "cluster", "2 emulated hosts, 1 rank each: acc_latency --server-idle",
             {}),
            ("hosts idle noserver", "acc_latency", idle, "cluster",
             "2 emulated hosts, 1 rank each: acc_latency --server-idle, SHIM_SERVER=0", no_server),
            ("hosts fock", "fock_build", fock, "cluster", "2 emulated hosts, 1 rank each: fock_build", {}),
        ]
    return runs


def measure(args, results):
    runs = plan(args)
    for key, program, flags, where, title, extra_env in runs:
        if where == "local":
            results[key] = bench(args, program, flags, where, title, extra_env)
    if args.no_cluster:
        return
    print(f"\nacc_hosts: bringing up the emulated cluster {CLUSTER} ({os.path.relpath(SPEC, REPO)}) ...", flush=True)
    print(vcluster("up", SPEC).strip(), flush=True)
    for key, program, flags, where, title, extra_env in runs:
        if where != "local":
            results[key] = bench(args, program, flags, where, title, extra_env)


def fmt(value, digits=None):
    v = float(value)
    if digits is not None:
        return f"{v:.{digits}f}"
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.0f}"


def summarize(results, elapsed):
    print("\n" + "=" * 100)
    print("## SUMMARY (acc_hosts)\n")
    uname = os.uname()
    print(f"Measured {time.strftime('%Y-%m-%d %H:%M')} on host {socket.gethostname()} (nproc "
          f"{len(os.sched_getaffinity(0))}, kernel {uname.release}, {uname.machine}); emulated hosts share its "
          f"kernel and cores.  ")
    first = next(iter(results.values()), None)
    if first:
        print(first.machine + "  ")
        mpi = next((h for h in first.header if h.startswith("MPI:")), "")
        print(mpi + "  ")
        windows = next((h for h in first.header if h.startswith("windows")), "")
        if windows:
            print(windows + "  ")
    for key, label in (("local latency", "one node"), ("hosts latency", "2 TCP hosts")):
        result = results.get(key)
        if result:
            ranks = next((h for h in result.header if h.startswith("ranks ")), "")
            print(f"{label}: {ranks}  ")
    print()

    print("### Accumulate latency (us per MPI_Accumulate + MPI_Win_flush) and bandwidth (MB/s, 64 per flush)\n")
    print("median over rounds of the max over ranks; ratios are medians of same-round ratios.\n")
    print("| where | size | lat native | lat caller | lat owner | owner/native lat | MB/s native | MB/s caller | "
          "MB/s owner | owner/caller MB/s | owner/native MB/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, label in (("local latency", "one node"), ("hosts latency", "2 TCP hosts")):
        result = results.get(key)
        if not result:
            continue
        sizes = sorted({int(r["bytes"]) for r in result.rows})
        shown = [s for s in sizes if s in (8, 64, 1024, 4096, 65536, 1 << 20)] or sizes
        for size in shown:
            cells = {p: result.find(bytes=size, path=p) for p in PATHS}
            if not all(cells.values()):
                continue
            owner = cells["owner"]
            print(f"| {label} | {format_size(size)} | " +
                  " | ".join(fmt(cells[p]["latency_us"]) for p in PATHS) +
                  f" | {fmt(owner['lat_vs_native'], 2)} | " +
                  " | ".join(fmt(cells[p]["bandwidth_mbs"]) for p in PATHS) +
                  f" | {fmt(owner['bw_vs_caller'], 2)} | {fmt(owner['bw_vs_native'], 2)} |")
    hosts = results.get("hosts latency")
    owner_mib = hosts.find(bytes=1 << 20, path="owner") if hosts else None
    if owner_mib:
        vs_caller = float(owner_mib["bw_vs_caller"])
        vs_native = float(owner_mib["bw_vs_native"])
        print(f"\nTarget, 1 MiB bandwidth between the 2 hosts: owner/caller {vs_caller:.2f} (>= 1.5: "
              f"{'met' if vs_caller >= 1.5 else 'NOT met'}), owner/native {vs_native:.2f} (>= 1: "
              f"{'met' if vs_native >= 1.0 else 'NOT met'}).")

    busy = results.get("hosts busy")
    if busy:
        stretch = next((h for h in busy.header if h.startswith("acc_latency:")), "")
        print("\n### Origin latency while the target computes without calling MPI (2 TCP hosts)\n")
        print(f"{stretch}\n")
        print("| size | path | idle us | busy us | busy/idle | accumulates per busy batch |")
        print("|---|---|---|---|---|---|")
        for r in busy.rows:
            print(f"| {format_size(int(r['bytes']))} | {r['path']} | {fmt(r['idle_us'])} | {fmt(r['busy_us'])} | "
                  f"{fmt(r['busy_over_idle'], 2)} | {r['busy_ops']} |")

    idle_runs = [(label, results.get(key), results.get(key + " noserver"))
                 for key, label in (("local idle", "one node"), ("hosts idle", "2 TCP hosts")) if results.get(key)]
    if idle_runs:
        print("\n### CPU of the threads other than the main one while all ranks sleep (no MPI calls)\n")
        print("percent of one core, schedstat where available, else utime + stime ticks; threads started at "
              "MPI_Init run before any window exists too; SHIM_SERVER=0 shows MPI's own threads alone.\n")
        print("| where | rank | host | SHIM_SERVER=0, windows used | no windows yet | windows allocated and used | "
              "threads (windows used) |")
        print("|---|---|---|---|---|---|---|")

        def pct(row):
            if not row:
                return "-"
            value = row["other_threads_exact_pct"] or row["other_threads_pct"]
            return f"{float(value):.2f}%"
        for label, result, baseline in idle_runs:
            for rank in sorted({r["rank"] for r in result.rows}, key=int):
                before = result.find(phase="no-windows", rank=rank)
                after = result.find(phase="windows", rank=rank)
                base = baseline.find(phase="windows", rank=rank) if baseline else None
                if not (before and after):
                    continue
                print(f"| {label} | {rank} | {after['host']} | {pct(base)} | {pct(before)} | {pct(after)} | "
                      f"{after['threads']} |")

    fock_rows = [(label, results.get(key)) for key, label in (("local fock", "one node"),
                                                              ("hosts fock", "2 TCP hosts")) if results.get(key)]
    if fock_rows:
        print("\n### Fock-build-like kernel (fock_build), ms per build, max over ranks\n")
        problem = next((h for h in fock_rows[0][1].header if h.startswith("per build:")), "")
        print(f"{problem}\n")
        print("| where | path | ms per build | min | max | compute | x/native | verified |")
        print("|---|---|---|---|---|---|---|---|")
        for label, result in fock_rows:
            for r in result.rows:
                print(f"| {label} | {r['path']} | {fmt(r['time_ms'])} | {fmt(r['min_ms'])} | {fmt(r['max_ms'])} | "
                      f"{fmt(r['compute_ms'])} | {r['vs_native'] or '-'} | {r['verified']} |")

    print("\nEvery run checked its results: the target's window after every acc_latency batch, the whole matrix "
          "against a local reference after every fock_build build. Paths ran alternating within each run. "
          "Emulated hosts share this machine's cores (see each run's header): the busy target's compute, the "
          "origin's polling and any server thread compete for them.")
    print(f"\nacc_hosts: {elapsed:.0f} s in all")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(REPO, "build"), help="shim's build directory; default %(default)s")
    parser.add_argument("--no-cluster", action="store_true", help="only the one-machine runs (no root needed)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds (a smoke test, not for figures)")
    parser.add_argument("--busy", type=float, default=0.01,
                        help="seconds per compute stretch of the busy target; default %(default)s")
    parser.add_argument("--idle", type=float, default=5.0,
                        help="seconds of sleep per --server-idle phase; default %(default)s")
    args = parser.parse_args(argv)
    args.build = os.path.abspath(args.build)
    refusal = host_runs.preflight("acc_hosts", args.build, PROGRAMS, need_root=not args.no_cluster)
    if refusal is not None:
        return refusal
    start = time.monotonic()
    results = {}
    status = host_runs.run_measurement(
        "acc_hosts", lambda: measure(args, results),
        None if args.no_cluster else lambda: print(vcluster("down").strip(), flush=True))
    if results:
        summarize(results, time.monotonic() - start)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
