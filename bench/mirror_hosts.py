#!/usr/bin/env python3
"""mirror_hosts: the mirrored-window benchmarks on one machine and on an
emulated cluster, with one summary.

  1. On this machine, 2 ranks with SHIM_NODE_SIZE=1 (two virtual nodes of
     one process each; native MPI_Get/MPI_Put then go through UCX shared
     memory): mirror_access (one origin, all origins, and with the user
     buffer 16 bytes past a page), mirror_merge, mirror_matmul, mirror_dft.
  2. On a vcluster from bench/four_hosts.spec (4 hosts, one subnet, 1 Gbit/s
     links; UCX over TCP), one rank per host: mirror_access on 2 hosts (one
     origin; all origins up to 64 KiB), then mirror_merge, mirror_matmul and
     mirror_dft on 2, 3 and 4 hosts.
Each run's header and results are printed as they come (CSV from --csv,
laid out as a table), then one summary of the key figures and what they
mean. The cluster is brought up first and always taken down at the end (its
name is VCLUSTER_NAME, default "mirrorbench"). Needs root (vcluster); takes
about 10 minutes. The machine has few cores and emulated hosts share them:
read the SCHEDULER-BOUND lines of the runs with more ranks than cores.

  bench/mirror_hosts.py [--build DIR] [--no-cluster] [--quick]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import host_runs  # noqa: E402
from host_runs import Failure, Result, format_size  # noqa: E402

REPO = os.path.dirname(HERE)
SPEC = os.path.join(HERE, "four_hosts.spec")
VCLUSTER = os.path.join(REPO, "tools", "vcluster")
CLUSTER = os.environ.get("VCLUSTER_NAME", "mirrorbench")
PROGRAMS = ["mirror_access", "mirror_merge", "mirror_matmul", "mirror_dft"]
# A hung run must not keep the cluster up forever.
RUN_TIMEOUT = 900


def run(command, env, what):
    return host_runs.run(command, env, what, RUN_TIMEOUT)


def local_env():
    env = dict(os.environ, SHIM_NODE_SIZE="1")
    return env


def cluster_env():
    env = dict(os.environ, VCLUSTER_NAME=CLUSTER)
    env.pop("VCLUSTER_PRELOAD", None)
    env.pop("SHIM_NODE_SIZE", None)
    return env


def vcluster(*args, what=None):
    return run([VCLUSTER, *args], cluster_env(), what or f"vcluster {args[0]}")


def bench(args, program, flags, ranks, where, title):
    path = os.path.join(args.build, "bench", program)
    command = ["mpiexec", "-n", str(ranks), path, "--csv", *flags]
    start = time.monotonic()
    if where == "local":
        output = run(command, local_env(), title)
    else:
        output = run([VCLUSTER, "run", "--", *command], cluster_env(), title)
    result = Result(f"{title}  [{time.monotonic() - start:.0f} s]", output)
    result.show()
    return result


def plan(args):
    """(key, program, flags, ranks, where, title) of every run, in order."""
    rounds = ["--rounds", "3"] if args.quick else []
    runs = [
        ("local access one", "mirror_access", ["--origins", "one", *rounds], 2, "local",
         "one machine, 2 ranks, SHIM_NODE_SIZE=1: mirror_access, rank 0 the only origin"),
        ("local access all", "mirror_access", ["--origins", "all", *rounds], 2, "local",
         "one machine, 2 ranks, SHIM_NODE_SIZE=1: mirror_access, both ranks origins"),
        ("local access offset", "mirror_access", ["--origins", "one", "--min", "4K", "--buffer-offset", "16", *rounds],
         2, "local", "one machine, 2 ranks, SHIM_NODE_SIZE=1: mirror_access, user buffer 16 bytes past a page"),
        ("local merge", "mirror_merge", [*rounds], 2, "local", "one machine, 2 ranks, SHIM_NODE_SIZE=1: mirror_merge"),
        ("local matmul", "mirror_matmul", [*rounds], 2, "local", "one machine, 2 ranks, SHIM_NODE_SIZE=1: mirror_matmul"),
        ("local dft", "mirror_dft", [*rounds], 2, "local", "one machine, 2 ranks, SHIM_NODE_SIZE=1: mirror_dft"),
    ]
    if not args.no_cluster:
        runs += [
            ("hosts2 access one", "mirror_access", ["--origins", "one", "--rounds", "7"], 2, "cluster",
             "2 emulated hosts (TCP, 1 Gbit/s), 1 rank each: mirror_access, rank 0 the only origin"),
            ("hosts2 access all", "mirror_access", ["--origins", "all", "--max", "64K", "--rounds", "5"], 2, "cluster",
             "2 emulated hosts (TCP, 1 Gbit/s), 1 rank each: mirror_access, both ranks origins, up to 64 KiB"),
        ]
        for hosts in (2, 3, 4):
            cluster_rounds = ["--rounds", "3"] if args.quick or hosts > 2 else ["--rounds", "5"]
            runs += [
                (f"hosts{hosts} merge", "mirror_merge", cluster_rounds, hosts, "cluster",
                 f"{hosts} emulated hosts, 1 rank each: mirror_merge"),
                (f"hosts{hosts} matmul", "mirror_matmul", cluster_rounds, hosts, "cluster",
                 f"{hosts} emulated hosts, 1 rank each: mirror_matmul"),
                (f"hosts{hosts} dft", "mirror_dft", ["--rounds", "3"], hosts, "cluster",
                 f"{hosts} emulated hosts, 1 rank each: mirror_dft"),
            ]
    return runs


def measure(args):
    results = {}
    runs = plan(args)
    for key, program, flags, ranks, where, title in runs:
        if where != "local":
            break
        results[key] = bench(args, program, flags, ranks, where, title)
    if args.no_cluster:
        return results
    print(f"\nmirror_hosts: bringing up the emulated cluster {CLUSTER} ({os.path.relpath(SPEC, REPO)}) ...", flush=True)
    print(vcluster("up", SPEC).strip(), flush=True)
    for key, program, flags, ranks, where, title in runs:
        if where == "local":
            continue
        results[key] = bench(args, program, flags, ranks, where, title)
    return results


def row(result, **match):
    if result is None:
        return None
    for r in result.rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def fmt_us(value):
    v = float(value)
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.0f}"


def summarize(results, elapsed):
    print("\n" + "=" * 100)
    print("SUMMARY (mirror_hosts)")
    first = next(iter(results.values()), None)
    if first:
        print(first.machine)
        mpi = next((h for h in first.header if h.startswith("MPI:")), "")
        print(mpi)

    print("\n1. Get/put of an element range that a remote owner holds (mirror_access): us per operation, median over "
          "rounds of the max over ranks")
    print(f"   {'where':<44} {'size':>6} {'MPI_Get+flush':>14} {'mirror_get':>11} {'MPI_Put+flush':>14} {'mirror_put':>11}")
    for key, label in (("local access one", "one machine, virtual nodes, one origin"),
                       ("local access all", "one machine, virtual nodes, both origins"),
                       ("hosts2 access one", "2 emulated TCP hosts, one origin"),
                       ("hosts2 access all", "2 emulated TCP hosts, both origins")):
        for size in ("8", "4096", "1048576"):
            get_native = row(results.get(key), bytes=size, method="MPI_Get+flush")
            get_mirror = row(results.get(key), bytes=size, method="mirror_get")
            put_native = row(results.get(key), bytes=size, method="MPI_Put+flush")
            put_mirror = row(results.get(key), bytes=size, method="mirror_put")
            if not (get_native and get_mirror and put_native and put_mirror):
                continue
            print(f"   {label:<44} {format_size(int(size)):>6} {fmt_us(get_native['latency_us']):>14} "
                  f"{fmt_us(get_mirror['latency_us']):>11} {fmt_us(put_native['latency_us']):>14} "
                  f"{fmt_us(put_mirror['latency_us']):>11}")
    mirror8 = [float(r["latency_us"]) for key in ("local access one", "local access all", "hosts2 access one",
                                                  "hosts2 access all")
               for r in [row(results.get(key), bytes="8", method="mirror_get")] if r]
    native8 = row(results.get("hosts2 access one"), bytes="8", method="MPI_Get+flush")
    if mirror8:
        print(f"   target 'mirrored get of 8 B <= 0.3 us': {'met' if max(mirror8) <= 0.3 else 'NOT met'} "
              f"(measured {min(mirror8):.3f} .. {max(mirror8):.3f} us over the runs above)")
    if native8:
        print(f"   native cross-host MPI_Get of 8 B, one origin: {fmt_us(native8['latency_us'])} us here "
              f"(the brief's reference figure: 23.3 us)")
    off = results.get("local access offset")
    base = results.get("local access one")
    if off and base:
        cells = []
        for size in ("4096", "65536", "1048576"):
            a = row(base, bytes=size, method="mirror_put")
            b = row(off, bytes=size, method="mirror_put")
            if a and b:
                cells.append(f"{format_size(int(size))} {fmt_us(a['latency_us'])} -> {fmt_us(b['latency_us'])} us")
        print("   mirror_put, page-aligned user buffer -> buffer 16 bytes past a page (one machine): " + "; ".join(cells))

    print("\n2. Merge (mirror_merge): us per merge, median over rounds of the max over ranks")
    print(f"   {'where':<28} {'size':>7} {'full':>10} {'sparse':>10} {'patch 10%':>10}   bytes per merging process: "
          f"full >= / sparse in / patch >=")
    for key, label in (("local merge", "one machine, 2 virtual nodes"), ("hosts2 merge", "2 emulated hosts"),
                       ("hosts3 merge", "3 emulated hosts"), ("hosts4 merge", "4 emulated hosts")):
        for size in (str(64 << 10), str(1 << 20), str(16 << 20)):
            cells = [row(results.get(key), bytes=size, mode=m) for m in ("full", "sparse", "patch")]
            if not all(cells):
                continue
            print(f"   {label:<28} {format_size(int(size)):>7} " +
                  " ".join(f"{fmt_us(c['time_us']):>10}" for c in cells) + "   " +
                  " / ".join(format_size(int(float(c["bytes_per_process"]))) for c in cells))

    print("\n3. Matrix multiply (mirror_matmul, n = 512): ms per multiply (total; compute; merge or fetch)")
    for key, label in (("local matmul", "one machine, 2 virtual nodes"), ("hosts2 matmul", "2 emulated hosts"),
                       ("hosts3 matmul", "3 emulated hosts"), ("hosts4 matmul", "4 emulated hosts")):
        result = results.get(key)
        if not result:
            continue
        cells = [f"{r['variant']} {float(r['total_ms']):.1f} ({float(r['compute_ms']):.1f}; {float(r['comm_ms']):.1f})"
                 for r in result.rows]
        print(f"   {label:<28} " + "   ".join(cells))

    print("\n4. DFT pattern (mirror_dft): ms per run of all tasks (mirrored total includes copy D in, merge K, copy K "
          "out)")
    for key, label in (("local dft", "one machine, 2 virtual nodes"), ("hosts2 dft", "2 emulated hosts"),
                       ("hosts3 dft", "3 emulated hosts"), ("hosts4 dft", "4 emulated hosts")):
        mirrored = row(results.get(key), variant="mirrored")
        distributed = row(results.get(key), variant="distributed")
        if not (mirrored and distributed):
            continue
        print(f"   {label:<28} mirrored {float(mirrored['total_ms']):9.1f} (tasks {float(mirrored['tasks_ms']):.1f}, "
              f"merge {float(mirrored['phase3_ms']):.1f})   distributed {float(distributed['total_ms']):9.1f}   "
              f"distributed/mirrored {float(distributed['total_ms']) / float(mirrored['total_ms']):.1f}")

    print("\nWhat the figures mean: every benchmark verified its results (gets against the array's values, merges "
          "against exact sums on every node's copy, matmul against a serial reference and across variants, DFT K "
          "against a serial reference bit for bit). Native and mirrored variants ran alternating in the same run. "
          "A mirrored get/put is a memcpy within the node's shared copy: its cost does not depend on the network, "
          "but a mirrored put is seen by other nodes only after a merge (section 2), whose cost grows with the "
          "size and the network. 'One origin' is OSU-style (rank 0 issues, the target waits in MPI_Barrier); 'both "
          "origins' has every rank issue RMA at once. Runs of 3-4 ranks on this 2-core machine are scheduler-bound "
          "(see their headers). Bytes per process are computed from the algorithms (see mirror_merge's header), "
          "not counted on the wire.")
    print(f"mirror_hosts: {elapsed:.0f} s in all")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(REPO, "build"), help="shim's build directory; default %(default)s")
    parser.add_argument("--no-cluster", action="store_true", help="only the one-machine runs (no root needed)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test, not for figures)")
    args = parser.parse_args(argv)
    args.build = os.path.abspath(args.build)
    refusal = host_runs.preflight("mirror_hosts", args.build, PROGRAMS, need_root=not args.no_cluster)
    if refusal is not None:
        return refusal
    start = time.monotonic()
    results = {}
    status = host_runs.run_measurement(
        "mirror_hosts", lambda: results.update(measure(args)),
        None if args.no_cluster else lambda: print(vcluster("down").strip(), flush=True))
    if results:
        summarize(results, time.monotonic() - start)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
