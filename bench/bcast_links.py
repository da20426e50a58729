#!/usr/bin/env python3
"""bcast_links: how many bytes each broadcast algorithm puts on the slow
links of an emulated cluster, measured from outside, beside its time.

shim counts the messages of its own trees, but not MPICH's, and not what the
network does with them. This reads the kernel's interface counters instead,
so native MPI_Bcast and shim's algorithms are measured the same way.

On a vcluster built from tests/vcluster/three_subnets.spec (6 hosts in 3
subnets, 100 Mbit/s router links) it
  1. runs shim-probe for the network profile (unless --profile is given);
  2. for each message size and algorithm, runs `bcast_latency --single ALG`
     with N and with 2N broadcasts and reads the counters around each run:
     bytes per broadcast = (delta(2N) - delta(N)) / N, so start-up,
     connection set-up and shut-down traffic cancel;
  3. runs bcast_latency once over all algorithms for the times;
and prints one table. Every run has 6 ranks, one per host, root 0,
SHIM_PROFILE set and libshim preloaded.

The slow links are the router's links into the subnets: in `vcluster
counters`, every interface of the router namespace except "lo" and "head"
(the head's control link to mpiexec). Their tx_bytes are the bytes that
enter a subnet from another one, IP packets with headers, plus the TCP
acknowledgements of data leaving that subnet.

The cluster is brought up first (unless --no-up) and always taken down at
the end. Its name is VCLUSTER_NAME, default "bench", so a cluster of another
name is left alone. Needs root; takes about 5-10 minutes.

  bench/bcast_links.py [--no-up] [--profile FILE] [--timing-only] [--build DIR]
"""
import argparse
import csv
import json
import os
import signal
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import host_runs  # noqa: E402
from host_runs import Failure, format_size  # noqa: E402

REPO = os.path.dirname(HERE)
SPEC = os.path.join(REPO, "tests", "vcluster", "three_subnets.spec")
VCLUSTER = os.path.join(REPO, "tools", "vcluster")
CLUSTER = os.environ.get("VCLUSTER_NAME", "bench")

SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20]
ALGORITHMS = ["native", "eco", "twolevel"]
RANKS = 6
ROOT = 0
# Broadcasts per size in the shorter of the two runs: about 4 MiB of
# payload, so the difference stands well above the few kilobytes by which
# the control traffic of two runs can differ.
PAYLOAD_PER_RUN = 4 << 20
# A hung run must not keep the cluster up forever; the slowest run here
# (probe, or the timing run) takes a few minutes on a loaded machine.
RUN_TIMEOUT = 600


def environment(preload):
    env = dict(os.environ, VCLUSTER_NAME=CLUSTER)
    env.pop("VCLUSTER_PRELOAD", None)
    if preload:
        env["VCLUSTER_PRELOAD"] = preload
    return env


def run(command, preload=None, what=None):
    """Runs command, returns its stdout; on failure shows its output."""
    return host_runs.run(command, environment(preload), what or command[0], RUN_TIMEOUT)


def vcluster(*args, preload=None, what=None):
    return run([VCLUSTER, *args], preload=preload, what=what or f"vcluster {args[0]}")


def slow_link_bytes():
    counters = json.loads(vcluster("counters"))
    router = counters.get(f"{CLUSTER}-router")
    if router is None:
        raise Failure(f"vcluster counters: no namespace {CLUSTER}-router")
    links = {name: c["tx_bytes"] for name, c in router.items() if name not in ("lo", "head")}
    if not links:
        raise Failure(f"vcluster counters: the router {CLUSTER}-router has no subnet links")
    return sum(links.values())


def csv_rows(output):
    """The data rows of bcast_latency --csv, and its 'machine:' line."""
    lines = output.splitlines()
    machine = next((line[2:] for line in lines if line.startswith("# machine:")), "machine: unknown")
    table = [line for line in lines if line and not line.startswith("#") and "," in line]
    return list(csv.DictReader(table)), machine


def bcast_latency(build, profile, flags, what):
    command = ["mpiexec", "-n", str(RANKS), "-genv", "SHIM_PROFILE", profile,
               os.path.join(build, "bench", "bcast_latency"), "--root", str(ROOT), "--csv", *flags]
    output = vcluster("run", "--", *command, preload=os.path.join(build, "libshim.so"), what=what)
    return csv_rows(output)


def link_bytes_per_bcast(build, profile, algorithm, size):
    """(bytes per broadcast on the slow links, shim's 'ran' column)."""
    n = max(1, PAYLOAD_PER_RUN // size)
    deltas = []
    ran = set()
    for iterations in (n, 2 * n):
        before = slow_link_bytes()
        rows, _ = bcast_latency(build, profile,
                                ["--single", algorithm, "--min", str(size), "--max", str(size),
                                 "--fixed-iters", str(iterations), "--warmup", "0", "--rounds", "1"],
                                what=f"bcast_latency --single {algorithm}, {format_size(size)} x {iterations}")
        deltas.append(slow_link_bytes() - before)
        if len(rows) != 1 or int(rows[0]["iterations"]) != iterations:
            raise Failure(f"bcast_latency --single {algorithm}: expected one row of {iterations} iterations, got {rows}")
        ran.add(rows[0]["ran"])
    per_bcast = (deltas[1] - deltas[0]) / n
    if per_bcast <= 0:
        raise Failure(f"{algorithm} at {format_size(size)}: {deltas[1]} bytes with {2 * n} broadcasts, "
                      f"{deltas[0]} with {n}: the counters did not grow with the broadcasts")
    return per_bcast, "+".join(sorted(ran))


def format_link_bytes(value, size):
    return f"{value:,.0f} ({value / size:.2f}x)"


def subnets_of(profile):
    try:
        with open(profile, encoding="utf-8") as f:
            data = json.load(f)
        hosts, subnets = data["hosts"], data["subnets"]
        return ["{" + ",".join(hosts[h] for h in members) + "}" for members in subnets]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        raise Failure(f"{profile}: not a shim-probe profile ({error})") from None


def measure(args, workdir):
    if args.profile:
        profile = os.path.abspath(args.profile)
    else:
        profile = os.path.join(workdir, "profile.json")
        print("bcast_links: probing the network (shim-probe, 12 ranks) ...", flush=True)
        vcluster("run", "--", "mpiexec", "-n", str(2 * RANKS), os.path.join(args.build, "tools", "shim-probe"),
                 "--output", profile, what="shim-probe")
    subnets = subnets_of(profile)

    links = {}
    for size in SIZES if not args.timing_only else []:
        for algorithm in ALGORITHMS:
            links[size, algorithm] = link_bytes_per_bcast(args.build, profile, algorithm, size)
            print(f"bcast_links: {format_size(size):>7} {algorithm:>8}: "
                  f"{format_link_bytes(links[size, algorithm][0], size)} bytes per broadcast on the slow links "
                  f"(shim ran {links[size, algorithm][1]})", flush=True)

    print("bcast_links: timing all algorithms in one run (bcast_latency) ...", flush=True)
    rows, machine = bcast_latency(args.build, profile,
                                  ["--algorithms", ",".join(ALGORITHMS), "--min", str(SIZES[0]), "--max", str(SIZES[-1])],
                                  what="bcast_latency (timing)")
    timing = {(int(r["bytes"]), r["algorithm"]): r for r in rows}
    report(profile, subnets, links, timing, machine)


def report(profile, subnets, links, timing, machine):
    minimum_factor = len(subnets) - 1
    print()
    print(f"bcast_links: MPI_Bcast from rank {ROOT}, {RANKS} ranks on hosts h0..h5 (one each), "
          f"{len(subnets)} subnets in the profile: {' '.join(subnets)}")
    print(machine)
    print(f"profile: {profile}")
    print()
    if links:
        print("Bytes per broadcast on the slow links, and time relative to native")
        header = (f"{'size':>8} | {'native':>22} | {'eco':>22} | {'twolevel':>22} | "
                  f"{f'minimum ({minimum_factor} x size)':>22} | {'eco/native':>10} | {'twolevel/native':>15}")
        print(header)
        print("-" * len(header))
    for size in SIZES:
        ratios = []
        for algorithm in ("eco", "twolevel"):
            row = timing.get((size, algorithm))
            ratios.append(f"{float(row['shim_over_native']):.2f}" if row else "-")
        if not links:
            print(f"{format_size(size):>8}: eco/native {ratios[0]}, twolevel/native {ratios[1]}")
            continue
        print(f"{format_size(size):>8} | " +
              " | ".join(f"{format_link_bytes(links[size, a][0], size):>22}" for a in ALGORITHMS) +
              f" | {format_link_bytes(minimum_factor * size, size):>22} | {ratios[0]:>10} | {ratios[1]:>15}")
    print()
    print("Time per broadcast, ms (bcast_latency: median over rounds of the max over ranks), and what shim ran")
    print(f"{'size':>8} {'iters':>6} " + " ".join(f"{a:>10}" for a in ALGORITHMS) + "  ran")
    for size in SIZES:
        cells = [timing.get((size, a)) for a in ALGORITHMS]
        iterations = next((c["iterations"] for c in cells if c), "-")
        times = " ".join(f"{float(c['latency_us']) / 1e3:>10.1f}" if c else f"{'-':>10}" for c in cells)
        ran = ",".join(c["ran"] if c else "-" for c in cells)
        print(f"{format_size(size):>8} {iterations:>6} {times}  {ran}")
    print()
    print("slow links: the router's interfaces into the subnets (every interface of the router namespace but "
          "'lo' and 'head'), 100 Mbit/s; counted: their tx_bytes, i.e. IP bytes entering a subnet from another, "
          "headers and TCP acknowledgements included. Per broadcast = (delta over 2N broadcasts - delta over N) / "
          "N, from two runs of bcast_latency --single. minimum: one crossing into each subnet but the root's. "
          "x/native time: median over rounds of the same-round ratio (pass-through = shim's baseline "
          "PMPI_Bcast)")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-up", action="store_true",
                        help=f"use the cluster {CLUSTER} that is already up (it is still taken down at the end)")
    parser.add_argument("--profile", help="a shim-probe profile of this cluster; default: probe it now")
    parser.add_argument("--timing-only", action="store_true", help="skip the link counters, only time the algorithms")
    parser.add_argument("--build", default=os.path.join(REPO, "build"), help="shim's build directory; default %(default)s")
    args = parser.parse_args(argv)
    args.build = os.path.abspath(args.build)
    if os.geteuid() != 0:
        print("bcast_links: needs root (vcluster builds network namespaces)", file=sys.stderr)
        return 77
    for path in ("libshim.so", "bench/bcast_latency", "tools/shim-probe"):
        if not os.path.exists(os.path.join(args.build, path)):
            print(f"bcast_links: {os.path.join(args.build, path)} is missing: build shim first (ninja -C {args.build})",
                  file=sys.stderr)
            return 2
    if args.profile and not os.path.isfile(args.profile):
        print(f"bcast_links: --profile {args.profile}: no such file", file=sys.stderr)
        return 2

    # SIGTERM (a timeout around this script) must unwind through `finally`
    # like Ctrl-C, so the cluster comes down.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    status = 0
    try:
        with tempfile.TemporaryDirectory(prefix="bcast_links.") as workdir:
            if not args.no_up:
                print(vcluster("up", SPEC).strip(), flush=True)
            measure(args, workdir)
    except Failure as error:
        print(f"bcast_links: {error}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("bcast_links: interrupted", file=sys.stderr)
        status = 130
    finally:
        try:
            print(vcluster("down").strip(), flush=True)
        except Failure as error:
            print(f"bcast_links: {error}", file=sys.stderr)
            status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
