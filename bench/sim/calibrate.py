#!/usr/bin/env python3
"""calibrate: the scale model against measurements on this machine.

  bench/sim/calibrate.py measure [--repeats N] [--build DIR]    # as root
  bench/sim/calibrate.py compare [--build DIR]

measure (needs root for the emulated hosts; about 5 minutes per repeat):
  1. build/bench/sim/message_costs with 2 ranks on this machine (shared
     memory): the per-message costs of the InfiniBand-like platforms;
  2. on two emulated hosts (tools/vcluster, bench/sim/calibration.spec:
     1 Gbit/s tc tbf links, UCX over TCP), message_costs again (the TCP
     platforms' costs), then native MPI_Alltoall and MPI_Bcast at 1 KiB,
     64 KiB and 1 MiB with bench/alltoall_latency and bench/bcast_latency
     (--algorithms native: PMPI calls, MPICH 4.0.2's own algorithms);
  and writes every figure, the command that made it and the load average
  before and after each repeat to docs/scale/measurements.json. The
  platforms (bench/sim/platforms.py) take their measured parameters from
  there: the least disturbed of the repeats.

compare (no root): simulates the same two collectives on the eth-1g
platform with 2 nodes x 1 (SMPI's mpich selection, 20 calls back to back
like the benchmarks' batches), and the broadcasts of bench/bcast_links.py
on the three-subnets platform (the network of tests/vcluster/three_subnets.spec
with its measured profile), and writes docs/scale/calibration.md: simulated
against measured, with the error.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO = os.path.dirname(os.path.dirname(HERE))
MEASUREMENTS = os.path.join(REPO, "docs", "scale", "measurements.json")
CALIBRATION = os.path.join(REPO, "docs", "scale", "calibration.md")
SPEC = os.path.join(HERE, "calibration.spec")
VCLUSTER = os.path.join(REPO, "tools", "vcluster")
CLUSTER = "simcal"
SIZES = [1 << 10, 64 << 10, 1 << 20]
SIM_ITERS = 20

# README, "Broadcast on the emulated 3-subnet network": bench/bcast_links.py,
# measured 2026-11-27 14:53 on this machine, nothing else running.
BCAST_LINKS_README = {
    "date": "2026-11-27 14:53, nothing else running (README, bench/bcast_links.py; ECO's segments from the "
            "run's own probe)",
    "ms": {65536: {"native": 16.6, "eco": 5.4, "twolevel": 11.1},
           262144: {"native": 65.3, "eco": 21.7, "twolevel": 44.5},
           1048576: {"native": 316.2, "eco": 85.9, "twolevel": 177.6},
           4194304: {"native": 1379.4, "eco": 342.0, "twolevel": 702.7}},
}

TWO_HOSTS_NOTES = [
    "What the model got wrong, and what it does now:", "",
    "- An alltoall's block to the rank itself goes, in SMPI, through its host's loopback link, whose latency is "
    "this machine's shared-memory one-way time at 8 B. One repeat of these measurements has that figure at "
    "11.4 ms (a disturbed run: the other repeats give 0.18-0.68 us); taken as it was, it made the simulated "
    "2-host alltoall cost 11.45 ms at every small size while the broadcast, which sends nothing to itself, "
    "stayed right (an earlier one-repeat calibration showed +18992% at 1 KiB this way). The platforms now take "
    "the least disturbed of the repeats.",
    "- SMPI charges one send and receive overhead curve to every message. On the TCP platforms that made a "
    "rank's message to itself (and, with several ranks per node, every message inside a node) cost TCP's 7 us "
    "instead of shared memory's 0.05-0.3 us. Messages whose ends share a host now cost the shared-memory "
    "curve (`bench/sim/message_cost_model.cpp`, SMPI's per-operation cost callbacks); alltoall at 1 KiB went "
    "from 24.6 to 17.7 us.", "",
    "Measured on a quiet machine (2026-11-27, load average 1.2-1.6 from the measurement itself), the repeats "
    "agree within a few percent and five of the six points are within 7%. Earlier repeats under other jobs' "
    "load (8-15 runnable processes on the 2 cores that run both emulated hosts' ranks and TCP stacks) had "
    "spread from 1957 to 13950 us at 64 KiB; the model's wire time was right, the measurements were not.", "",
    "What still misses: alltoall at 1 KiB, simulated 17.4 us against 9.5 measured. The simulated exchange "
    "costs about two one-way times, most likely because SMPI charges each rank the measured send time of a TCP message, 7-9 us, "
    "`message_costs`' send_s, as CPU time, and its own receive of the other rank's block waits behind it; "
    "the measured one little more than one (the simulated and measured 1 KiB broadcast, one message, agree "
    "within 7%). On the real hosts the kernel does much of that TCP work while the rank's send and receive "
    "overlap. A per-byte/per-message split of TCP's cost between the rank and the kernel would fix it; the "
    "model does not have one, so its small-message times on the Ethernet platforms err on the slow side for "
    "exchanges in both directions (shim's SA and native alike).", ""]


def load():
    return os.getloadavg()[0]


def sh(command, env=None, timeout=900):
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def csv_rows(text):
    lines = [line for line in text.splitlines() if line and not line.startswith("#") and "," in line]
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def vc_env():
    return dict(os.environ, VCLUSTER_NAME=CLUSTER)


def in_cluster(command):
    return [VCLUSTER, "run", "--", *command]


def measure_once(build):
    costs = os.path.join(REPO, build, "bench", "sim", "message_costs")
    a2a = os.path.join(REPO, build, "bench", "alltoall_latency")
    bcast = os.path.join(REPO, build, "bench", "bcast_latency")
    record = {"load_before": load()}
    record["node_costs"] = csv_rows(sh(["mpiexec", "-n", "2", costs, str(1 << 20)]))
    sh([VCLUSTER, "up", SPEC], env=vc_env())
    try:
        record["host_costs"] = csv_rows(sh(in_cluster(["mpiexec", "-n", "2", costs, str(1 << 20)]), env=vc_env()))
        record["alltoall_us"] = {}
        record["bcast_us"] = {}
        for size in SIZES:
            rows = csv_rows(sh(in_cluster(["mpiexec", "-n", "2", a2a, "--min", str(size), "--max", str(size),
                                           "--algorithms", "native", "--csv"]), env=vc_env()))
            record["alltoall_us"][str(size)] = float(rows[0]["latency_us"])
            rows = csv_rows(sh(in_cluster(["mpiexec", "-n", "2", bcast, "--min", str(size), "--max", str(size),
                                           "--algorithms", "native", "--csv"]), env=vc_env()))
            record["bcast_us"][str(size)] = float(rows[0]["latency_us"])
    finally:
        sh([VCLUSTER, "down"], env=vc_env())
    record["load_after"] = load()
    return record


def measure(args):
    if os.geteuid() != 0:
        sys.exit("calibrate: measure needs root (emulated hosts)")
    data = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": "this machine: Firecracker VM, 2 vCPUs AMD EPYC, MPICH 4.0.2 (ch4:ucx), Debian 12",
        "commands": {
            "node_costs": "mpiexec -n 2 build/bench/sim/message_costs 1048576",
            "host_costs": "tools/vcluster run -- mpiexec -n 2 build/bench/sim/message_costs 1048576 "
                          "(cluster: bench/sim/calibration.spec)",
            "alltoall_us": "tools/vcluster run -- mpiexec -n 2 build/bench/alltoall_latency --min S --max S "
                           "--algorithms native --csv",
            "bcast_us": "tools/vcluster run -- mpiexec -n 2 build/bench/bcast_latency --min S --max S "
                        "--algorithms native --csv",
        },
        "repeats": [],
    }
    for i in range(args.repeats):
        print(f"calibrate: repeat {i + 1}/{args.repeats}, load average {load():.2f}", flush=True)
        data["repeats"].append(measure_once(args.build))
    os.makedirs(os.path.dirname(MEASUREMENTS), exist_ok=True)
    with open(MEASUREMENTS, "w") as f:
        json.dump(data, f, indent=1)
    print(f"calibrate: wrote {os.path.relpath(MEASUREMENTS, REPO)}")


def measured_times(data, key, size):
    """(least disturbed, median) over the repeats: the fastest is the figure
    the model is compared with (platforms.least_disturbed says why)."""
    values = [r[key][str(size)] for r in data["repeats"]]
    return min(values), statistics.median(values)


def compare(args):
    import platforms
    import simrun
    with open(MEASUREMENTS) as f:
        data = json.load(f)
    program = simrun.default_program(args.build)
    two = platforms.Layout.regular(2, 1)
    lines = ["# Calibration: the model against measurements on this machine", "",
             "Made by `bench/sim/calibrate.py compare` from `docs/scale/measurements.json` "
             f"(`bench/sim/calibrate.py measure`, {data['date']}, {len(data['repeats'])} repeats; "
             f"{data['machine']}).", "",
             "Load average (1 min) before and after each repeat: " +
             ", ".join(f"{r['load_before']:.1f} / {r['load_after']:.1f}" for r in data["repeats"]) +
             ". Other work ran alongside when the load was above 2.", "",
             "## Two emulated hosts, 1 Gbit/s, one rank each (platform eth-1g, 2 nodes x 1)", "",
             "Measured: `bench/alltoall_latency` / `bench/bcast_latency` (native: MPICH 4.0.2's own algorithms; "
             "each figure the median over rounds of the max over ranks of the mean time per call), the fastest "
             "of the repeats (other work on the machine only adds time; the median of the repeats is beside it). "
             "The platform's per-message costs come from the same repeats, the least disturbed of each. "
             "Simulated: the same collective with SMPI's mpich selection, "
             f"{SIM_ITERS} calls back to back, max over ranks of the mean (`sim_collectives --iters {SIM_ITERS}`).",
             "",
             "| collective | size | measured us (fastest) | median of repeats | simulated us | error | within 30% |",
             "|---|---|---|---|---|---|---|"]
    worst = 0.0
    for op in ("alltoall", "bcast"):
        rows, error = simrun.run(program, "eth-1g", two, op, simrun.Variant("selector", "mpich"), SIZES,
                                 extra_args=["--iters", str(SIM_ITERS)])
        if error:
            sys.exit(f"calibrate: simulation of {op} failed: {error}")
        for row in rows:
            measured, median = measured_times(data, f"{op}_us", row["bytes"])
            simulated = row["seconds"] * 1e6
            err = (simulated - measured) / measured
            worst = max(worst, abs(err))
            lines.append(f"| MPI_{op.capitalize()} | {row['bytes'] >> 10} KiB | {measured:.1f} | {median:.1f} | "
                         f"{simulated:.1f} | "
                         f"{err * 100:+.0f}% | {'yes' if abs(err) <= 0.30 else '**no**'} |")
    lines += ["", f"Largest error: {worst * 100:.0f}% (target: within 30%).", ""] + TWO_HOSTS_NOTES
    lines += three_subnets(program)
    with open(CALIBRATION, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def three_subnets(program):
    import platforms
    import simrun
    six = platforms.Layout.regular(6, 1)
    sizes = sorted(BCAST_LINKS_README["ms"])
    sim = {}
    for name in ("eco", "twolevel"):
        rows, error = simrun.run(program, "three-subnets", six, "bcast", simrun.Variant("shim", name), sizes,
                                 extra_args=["--iters", "3"], profile=simrun.THREE_SUBNETS_PROFILE)
        if error:
            sys.exit(f"calibrate: three-subnets {name} failed: {error}")
        sim[name] = {r["bytes"]: r["seconds"] for r in rows}
    rows, error = simrun.run(program, "three-subnets", six, "bcast", simrun.Variant("selector", "mpich"), sizes,
                             extra_args=["--iters", "3"])
    if error:
        sys.exit(f"calibrate: three-subnets native failed: {error}")
    sim["native"] = {r["bytes"]: r["seconds"] for r in rows}
    out = ["## The 3-subnet network (platform three-subnets, 6 hosts x 1)", "",
           "The network of `tests/vcluster/three_subnets.spec` with shim's measured profile of it "
           "(`tests/vcluster/three_subnets_profile.json`: subnets {h0,h3}, {h1,h4}, {h2,h5}, k = 1). "
           "Measured: the README's table from `bench/bcast_links.py` "
           f"({BCAST_LINKS_README['date']}). Simulated: 3 broadcasts back to back from rank 0; native is "
           "SMPI's mpich selection (a binomial tree at 6 ranks, as MPICH 4.0.2 uses below 8 ranks).", "",
           "| size | measured eco/native | simulated | measured twolevel/native | simulated | "
           "simulated ms native / eco / twolevel |", "|---|---|---|---|---|---|"]
    for size in sizes:
        m = BCAST_LINKS_README["ms"][size]
        out.append(f"| {size >> 10} KiB | {m['eco'] / m['native']:.2f} | {sim['eco'][size] / sim['native'][size]:.2f}"
                   f" | {m['twolevel'] / m['native']:.2f} | {sim['twolevel'][size] / sim['native'][size]:.2f} | "
                   f"{sim['native'][size] * 1e3:.1f} / {sim['eco'][size] * 1e3:.1f} / "
                   f"{sim['twolevel'][size] * 1e3:.1f} |")
    out += ["", "Simulated against measured times: native +36%, +36%, +12%, +3% at 64 KiB-4 MiB, eco +57%, +39%, "
            "+36%, +35%, twolevel +64%, +58%, +22%, +15%: the model is slower everywhere, most at small sizes; "
            "the eco/native ratios come within 0.01-0.08 of the measured ones, the twolevel/native ratios within "
            "0.05-0.14. Two likely causes: tools/vcluster's tc tbf lets each link pass a 256 KiB burst at memory "
            "speed before the rate applies (21 ms of a 100 Mbit/s router link), a fixed saving per link crossing "
            "that the model's plain rates do not have; and the simulation's profile is the one stored in "
            "tests/vcluster, whose slowest pair between subnets measured 198 us one-way at 8 B where most pairs "
            "measure 9-12 us, so ECO cuts longer segments from it than from the measured run's own probe. Every "
            "probe of this network taken on 2026-11-27 (three at 14:30 and the measured run's) has one or two "
            "such pairs (33-153 us), so the segment length ECO takes here varies from probe to probe.", ""]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["measure", "compare"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    measure(args) if args.action == "measure" else compare(args)


if __name__ == "__main__":
    main()
