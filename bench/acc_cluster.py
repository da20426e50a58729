#!/usr/bin/python3 -B
"""acc_cluster: cooperative server clustering (SHIM_SERVER_CLUSTER), measured
and modelled.

1. Latency (8 B, MPI_Accumulate + MPI_Win_flush) and bandwidth (1 MiB, 64 per
   flush) of the owner path on virtual nodes of one rank, rank 0 to the last
   rank: 2 ranks with g=1 and g=2 (one cluster: the same direct route), and 4
   ranks with g=1 (direct) and g=2 (rank 2's server forwards to rank 3's).
   The ranks other than the origin wait asleep (acc_latency --idle-asleep):
   the forwarded path needs the origin and two server threads at once, three
   threads for this machine's 2 cores, and ranks spinning in MPI_Wait beside
   them made those figures the scheduler's. g is fixed at MPI_Init, so
   each runs as its own acc_latency job, alternating (--runs each); the
   figures are medians over runs of each run's median.
   With --hosts (as root), the same two routes between 4 emulated hosts on
   100 Mbit/s links (bench/four_slow_hosts.spec), one rank per host, where
   the links, not this machine's cores, bound a 1 MiB stream.
2. Per-server request buffers, peers, VmHWM, open descriptors and sockets from
   bench/acc_cluster after every process accumulated into every other, for
   N processes on virtual nodes of --ppn, unclustered (g=1) and clustered
   (g = auto: ceil(sqrt(nodes))), beside the model (counts, not timings: any N).
3. What the kernel sees of the buffers: each (N, g) runs twice more, with
   SHIM_SERVER_CREDITS=32 and =8 (the same buffer size), alternating
   (--repeats each), the server processes not accumulating themselves (their
   VmHWM holds no messages of their own in flight). VmHWM also holds MPI's
   and UCX's per-peer state, which grows with N whatever the credits; the
   difference between the two runs is what the buffers alone add, compared
   server by server with the model's difference.
4. The model (rma/server_map) for the largest server at 9,600 processes on 800
   nodes and 100,000 on 1,000 nodes, unclustered and clustered.
Writes acc_cluster.png and the tables (markdown) to --out.

  bench/acc_cluster.py [--build DIR] [--out DIR] [--runs R] [--repeats R] [--sizes 4,8,16,32,64] [--ppn P]
                       [--no-latency] [--hosts]
"""
import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_csv(command, env):
    full = dict(os.environ, **env)
    out = subprocess.run(command, env=full, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    rows = [line for line in out.stdout.splitlines()
            if line and not line.startswith("#") and not line.startswith("vcluster:")]
    return list(csv.DictReader(io.StringIO("\n".join(rows))))


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


# (name, ranks, g): rank 0 accumulates into the last rank. With 2 ranks, g=2
# puts both nodes in one cluster, where a server's own process sends
# directly: the same route as g=1. With 4 ranks, g=2 makes clusters {0,1}
# and {2,3}, and rank 2's server forwards rank 0's requests to rank 3's.
LATENCY_CASES = (("direct, 2 ranks", 2, "1"), ("g=2, 2 ranks", 2, "2"),
                 ("direct, 4 ranks", 4, "1"), ("forwarded, 4 ranks", 4, "2"))


def route_table(title, cases, runs, run_case, ratios):
    """Runs every case once per run, alternating, and tabulates the medians of
    8 B latency and 1 MiB bandwidth, then of the same-run ratios named in
    `ratios` as (label, slower case, faster case)."""
    samples = {case[0]: [] for case in cases}
    for _ in range(runs):
        for case in cases:
            by_size = {int(r["bytes"]): r for r in run_case(case)}
            samples[case[0]].append((float(by_size[8]["latency_us"]), float(by_size[1 << 20]["bandwidth_mbs"])))
    lines = [f"| {title} | 8 B latency (us) | 1 MiB bandwidth (MB/s) |", "|---|---|---|"]
    for name, values in samples.items():
        lines.append(f"| {name} | {median([v[0] for v in values]):.2f} | {median([v[1] for v in values]):.2f} |")
    for label, slower, faster in ratios:
        pairs = list(zip(samples[faster], samples[slower]))
        lines.append(f"| {label} (median of same-run ratios) | {median([s[0] / f[0] for f, s in pairs]):.2f} | "
                     f"{median([s[1] / f[1] for f, s in pairs]):.3f} |")
    return lines


def latency(build, runs):
    program = os.path.join(build, "bench", "acc_latency")
    def run_case(case):
        _, ranks, g = case
        return run_csv(["mpiexec", "-n", str(ranks), program, "--paths", "owner", "--sizes", "8,1M", "--rounds", "5",
                        "--batch-ms", "30", "--idle-asleep", "--csv"],
                       {"SHIM_NODE_SIZE": "1", "SHIM_SERVER_CLUSTER": g})
    return route_table("path", LATENCY_CASES, runs, run_case,
                       (("g=2 / direct, 2 ranks", "g=2, 2 ranks", "direct, 2 ranks"),
                        ("forwarded / direct, 4 ranks", "forwarded, 4 ranks", "direct, 4 ranks")))


# The same two routes between emulated hosts whose links, 100 Mbit/s each
# way (bench/four_slow_hosts.spec), bound a 1 MiB stream before this
# machine's 2 cores do: one rank per host, rank 0 to rank 3, g=1 direct and
# g=2 forwarded by rank 2's server, over two links where direct takes one.
HOSTS_CASES = (("direct, 4 hosts", "1"), ("forwarded, 4 hosts", "2"))


def hosts(build, runs):
    program = os.path.join(build, "bench", "acc_latency")
    vcluster = os.path.join(HERE, "..", "tools", "vcluster")
    spec = os.path.join(HERE, "four_slow_hosts.spec")
    def run_case(case):
        return run_csv([vcluster, "session", spec, "--", "mpiexec", "-n", "4", program, "--paths", "owner",
                        "--sizes", "8,1M", "--rounds", "3", "--idle-asleep", "--csv"],
                       {"VCLUSTER_NAME": os.environ.get("VCLUSTER_NAME", "acccl"), "SHIM_SERVER_CLUSTER": case[1]})
    return route_table("path (100 Mbit/s links)", HOSTS_CASES, runs, run_case,
                       (("forwarded / direct", "forwarded, 4 hosts", "direct, 4 hosts"),))


def memory(build, sizes, ppn):
    program = os.path.join(build, "bench", "acc_cluster")
    points = []
    for n in sizes:
        for g in ("1", "auto"):
            rows = run_csv(["mpiexec", "-n", str(n), program, "--csv"],
                           {"SHIM_NODE_SIZE": str(ppn), "SHIM_SERVER_CLUSTER": g})
            def most(*fields):
                return max(sum(int(r[f]) for f in fields) for r in rows)
            points.append({"processes": n, "g": int(rows[0]["g"]), "clustered": g != "1",
                           "bytes": most("direct_bytes", "forward_bytes"),
                           "model_bytes": most("model_direct_bytes", "model_forward_bytes"),
                           "peers": most("peers"), "model_peers": most("model_peers"),
                           "vm_hwm_kib": max(int(r["vm_hwm_kib"]) for r in rows),
                           "open_fds": max(int(r["open_fds"]) for r in rows),
                           "open_sockets": max(int(r["open_sockets"]) for r in rows)})
    lines = ["| processes | g | most buffer bytes of a server | model | most peers | model | max VmHWM (KiB) "
             "| max open fds | max open sockets |", "|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        lines.append(f"| {p['processes']} | {p['g']} | {p['bytes']} | {p['model_bytes']} | {p['peers']} | "
                     f"{p['model_peers']} | {p['vm_hwm_kib']} | {p['open_fds']} | {p['open_sockets']} |")
    return points, lines


def server_rows(build, n, ppn, g, credits):
    rows = run_csv(["mpiexec", "-n", str(n), os.path.join(build, "bench", "acc_cluster"), "--quiet-servers", "--csv"],
                   {"SHIM_NODE_SIZE": str(ppn), "SHIM_SERVER_CLUSTER": g, "SHIM_SERVER_CREDITS": str(credits)})
    return {int(r["server_rank"]): r for r in rows}


# The default credits and four times as many: the buffers' growth is then
# large beside VmHWM's spread from run to run. (VmHWM follows the model below
# the default too: from 1 to 8 credits at 16 processes 0.99x its growth at
# g = 1 and 1.08x at g = 4, 2026-11-29.)
KERNEL_CREDITS = (32, 8)


def kernel(build, sizes, ppn, repeats):
    """VmHWM(credits 32) - VmHWM(credits 8) per server against the model's
    difference of buffer bytes: medians over repeats, per server."""
    more, fewer = KERNEL_CREDITS
    lines = [f"| processes | g | servers | VmHWM growth from {fewer} to {more} credits, mean over servers (KiB) "
             "| model (KiB) "
             "| measured / model | servers within 10% |", "|---|---|---|---|---|---|---|"]
    points = []
    for n in sizes:
        for g in ("1", "auto"):
            hwm = {c: {} for c in KERNEL_CREDITS}
            buffers = {}
            for _ in range(repeats):
                for credits in KERNEL_CREDITS:
                    for rank, r in server_rows(build, n, ppn, g, credits).items():
                        hwm[credits].setdefault(rank, []).append(int(r["vm_hwm_kib"]))
                        buffers[(credits, rank)] = (int(r["model_direct_bytes"]) + int(r["model_forward_bytes"]),
                                                    int(r["g"]))
            servers = sorted(hwm[KERNEL_CREDITS[0]])
            measured = [median(hwm[more][s]) - median(hwm[fewer][s]) for s in servers]
            modelled = [(buffers[(more, s)][0] - buffers[(fewer, s)][0]) / 1024 for s in servers]
            within = sum(1 for m, e in zip(measured, modelled) if abs(m - e) <= 0.1 * e)
            mean_measured, mean_model = sum(measured) / len(servers), sum(modelled) / len(servers)
            width = buffers[(more, servers[0])][1]
            points.append((n, width, mean_measured, mean_model))
            lines.append(f"| {n} | {width} | {len(servers)} | {mean_measured:.0f} | {mean_model:.0f} | "
                         f"{mean_measured / mean_model:.2f} | {within} of {len(servers)} |")
    for width_one in (True, False):
        series = [p for p in points if (p[1] == 1) == width_one]
        if len(series) > 1 and series[-1][0] != series[0][0]:
            first, last = series[0], series[-1]
            grown, model_grown = last[2] - first[2], last[3] - first[3]
            lines.append(f"| {first[0]} -> {last[0]} | {'1' if width_one else 'clustered'} | | "
                         f"grew {grown:.0f} | grew {model_grown:.0f} | {grown / model_grown:.2f} | |")
    return lines


def model(build, jobs):
    program = os.path.join(build, "bench", "acc_cluster")
    table = []
    for processes, ppn in jobs:
        out = subprocess.run([program, "--model", str(processes), "--ppn", str(ppn), "--csv"],
                             capture_output=True, text=True, timeout=300)
        rows = [line for line in out.stdout.splitlines() if line and not line.startswith("#")]
        table.extend(csv.DictReader(io.StringIO("\n".join(rows))))
    lines = ["| processes | nodes | g | direct origins | direct MiB | forwarding MiB | peers |",
             "|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['processes']} | {r['nodes']} | {r['g']} | {r['direct_origins']} | "
                     f"{int(r['direct_bytes']) / 2**20:.1f} | {int(r['forward_bytes']) / 2**20:.2f} | {r['peers']} |")
    return table, lines


def plot(points, table, build, ppn, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    program = os.path.join(build, "bench", "acc_cluster")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    sizes = sorted({p["processes"] for p in points} | {12 * k for k in (10, 50, 100, 200, 400, 800)})
    for clustered, style in ((False, "C0"), (True, "C1")):
        xs, mib, peers = [], [], []
        for n in sizes:
            this_ppn = ppn if n <= max(p["processes"] for p in points) else 12
            cmd = [program, "--model", str(n), "--ppn", str(this_ppn), "--csv"]
            rows = [r for r in csv.DictReader(io.StringIO("\n".join(
                line for line in subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()
                if line and not line.startswith("#"))))]
            row = rows[1] if clustered else rows[0]
            xs.append(n)
            mib.append((int(row["direct_bytes"]) + int(row["forward_bytes"])) / 2**20)
            peers.append(int(row["peers"]))
        label = "clustered (g = ceil(sqrt(nodes))), model" if clustered else "unclustered (g=1), model"
        axes[0].plot(xs, mib, style + "-", label=label)
        axes[1].plot(xs, peers, style + "-", label=label)
        measured = [p for p in points if p["clustered"] == clustered]
        axes[0].plot([p["processes"] for p in measured], [p["bytes"] / 2**20 for p in measured], style + "o",
                     label=label.replace("model", "measured"))
        axes[1].plot([p["processes"] for p in measured], [p["peers"] for p in measured], style + "o",
                     label=label.replace("model", "measured"))
    for ax, title in ((axes[0], "largest server's request buffers (MiB)"), (axes[1], "peers sending to it")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("processes (measured: virtual nodes of %d; model beyond: 12 per node)" % ppn)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "acc_cluster.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--out", default=".")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--sizes", default="4,8,16,32,64")
    parser.add_argument("--ppn", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--hosts", action="store_true",
                        help="also direct against forwarded between 4 emulated hosts (as root)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if not args.no_latency:
        print("\n".join(latency(args.build, args.runs)) + "\n")
    if args.hosts:
        print("\n".join(hosts(args.build, args.runs)) + "\n")
    points, lines = memory(args.build, [int(s) for s in args.sizes.split(",")], args.ppn)
    print("\n".join(lines) + "\n")
    if args.ppn > 1:
        print("\n".join(kernel(args.build, [int(s) for s in args.sizes.split(",")], args.ppn, args.repeats)) + "\n")
    else:
        print("(no VmHWM-against-credits table with --ppn 1: every process runs a server, none would accumulate)\n")
    table, lines = model(args.build, [(9600, 12), (100000, 100)])
    print("\n".join(lines) + "\n")
    plot(points, table, args.build, args.ppn, args.out)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
