#!/usr/bin/python3 -B
"""bcast_links: the bytes each broadcast algorithm puts on the slow links of
an emulated cluster, counted by the kernel outside MPI and shim, beside its
time.

On a vcluster from tests/vcluster/three_subnets.spec (6 hosts in 3 subnets,
100 Mbit/s router links; name VCLUSTER_NAME, default bcastlinks): probes the
network with shim-probe (unless --profile), then per size and algorithm runs
`bcast_latency --single ALG` with N and with 2N broadcasts and reads the
router's interface counters around each (bytes per broadcast = (delta(2N) -
delta(N)) / N), then one bcast_latency run over all algorithms for the times.
Every run: 6 ranks, one per host, root 0, SHIM_PROFILE set, libshim
preloaded. Writes bcast_links.csv and bcast_links.png (time and slow-link
bytes by size) to --out and prints a markdown table. Needs root; about 7
minutes on a quiet machine.

  bench/bcast_links.py [--build DIR] [--out DIR] [--profile FILE] [--timing-only]
"""
import json
import os

import driver
from driver import Failure, format_size

SPEC = os.path.join(driver.REPO, "tests", "vcluster", "three_subnets.spec")
SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20]
ALGORITHMS = ["native", "eco", "twolevel"]
RANKS = 6
# Broadcasts per size in the shorter run: about 4 MiB of payload, so the
# difference stands well above what the control traffic of two runs varies.
PAYLOAD_PER_RUN = 4 << 20


def main():
    d = driver.Driver("bcast_links", __doc__, SPEC, lambda p: (
        p.add_argument("--profile", help="a shim-probe profile of this cluster; default: probe it now"),
        p.add_argument("--timing-only", action="store_true", help="skip the link counters, only time")), True)
    d.timeout = 600
    sizes = SIZES[1:3] if d.args.quick else SIZES
    preload = {"VCLUSTER_PRELOAD": os.path.join(d.args.build, "libshim.so")}
    links, timing = {}, {}

    def slow_link_bytes():
        # The router's interfaces into the subnets: all but "lo" and "head"
        # (the head's control link to mpiexec).
        router = json.loads(d.vcluster("counters")).get(f"{d.cluster}-router")
        if not router:
            raise Failure(f"vcluster counters: no router namespace {d.cluster}-router")
        return sum(c["tx_bytes"] for name, c in router.items() if name not in ("lo", "head"))

    def bcast(profile, flags, title):
        return d.bench("bcast_latency", ["--root", "0", *flags], RANKS, title,
                       {**preload, "SHIM_PROFILE": profile}, cluster=True)

    def measure():
        profile = os.path.abspath(d.args.profile) if d.args.profile else d.path("profile.json")
        if not d.args.profile:
            print("bcast_links: probing the network (shim-probe, 12 ranks) ...", flush=True)
            d.vcluster("run", "--", "mpiexec", "-n", str(2 * RANKS), os.path.join(d.args.build, "tools", "shim-probe"),
                       "--output", profile, what="shim-probe")
        for size in [] if d.args.timing_only else sizes:
            for algorithm in ALGORITHMS:
                n = max(1, PAYLOAD_PER_RUN // size)
                deltas, ran = [], set()
                for iterations in (n, 2 * n):
                    before = slow_link_bytes()
                    result = bcast(profile, ["--single", algorithm, "--min", str(size), "--max", str(size),
                                             "--fixed-iters", str(iterations), "--warmup", "0", "--rounds", "1"],
                                   f"bcast_latency --single {algorithm}, {format_size(size)} x {iterations}")
                    deltas.append(slow_link_bytes() - before)
                    ran.add(result.rows[0]["ran"])
                if deltas[1] <= deltas[0]:
                    raise Failure(f"{algorithm} at {format_size(size)}: the counters did not grow with the broadcasts")
                links[size, algorithm] = ((deltas[1] - deltas[0]) / n, "+".join(sorted(ran)))
        result = bcast(profile, ["--algorithms", ",".join(ALGORITHMS), "--min", str(sizes[0]), "--max",
                                 str(sizes[-1])], "bcast_latency, all algorithms alternating (timing)")
        timing.update({(int(r["bytes"]), r["algorithm"]): r for r in result.rows})

    status = d.measure(["libshim.so", "bench/bcast_latency", "tools/shim-probe"], lambda: None, measure)
    if not timing:
        return status
    rows = [[size, algorithm, f"{links[size, algorithm][0]:.0f}" if links else "", timing[size, algorithm]["ran"],
             f"{float(timing[size, algorithm]['latency_us']) / 1e3:.2f}",
             timing[size, algorithm]["shim_over_native"]] for size in sizes for algorithm in ALGORITHMS]
    driver.write_csv(d.path("bcast_links.csv"), ["bytes", "algorithm", "slow_link_bytes_per_bcast", "ran", "time_ms",
                                                 "time_over_native"], rows)

    def cell(size, algorithm):
        return f"{links[size, algorithm][0]:,.0f} ({links[size, algorithm][0] / size:.2f}x)" if links else "-"
    driver.table("MPI_Bcast from rank 0 over 3 subnets: bytes per broadcast on the slow links, and time relative "
                 "to native", ["size", "native: bytes on slow links", "eco", "twolevel", "minimum, 2 x size",
                               "eco/native time", "twolevel/native time"],
                 [[format_size(size), *(cell(size, a) for a in ALGORITHMS), f"{2 * size:,}",
                   *(f"{float(timing[size, a]['shim_over_native']):.2f}" for a in ALGORITHMS[1:])] for size in sizes])
    driver.table("Time per broadcast, ms (median over rounds of the max over ranks), and what shim ran",
                 ["size", *ALGORITHMS, "ran"],
                 [[format_size(size), *(f"{float(timing[size, a]['latency_us']) / 1e3:.1f}" for a in ALGORITHMS),
                   ", ".join(timing[size, a]["ran"] for a in ALGORITHMS)] for size in sizes])
    label = {"native": "native MPI_Bcast", "eco": "shim eco", "twolevel": "shim twolevel"}
    panels = [("time per broadcast", "ms (log)",
               {label[a]: {s: float(timing[s, a]["latency_us"]) / 1e3 for s in sizes} for a in ALGORITHMS})]
    if links:
        panels.append(("bytes on the 100 Mbit/s slow links per broadcast", "bytes (log)",
                       {**{label[a]: {s: links[s, a][0] for s in sizes} for a in ALGORITHMS},
                        "minimum: (subnets - 1) x size": {s: 2 * s for s in sizes}}))
    driver.plot_lines(d.path("bcast_links.png"), "MPI_Bcast, 6 hosts in 3 subnets (emulated)", panels)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
