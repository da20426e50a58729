#!/usr/bin/env python3
"""The scale model's smoke test (meson test 'sim smoke', about 15 seconds on 2 cores).

On the simulated onload platform, 4 nodes x 4 (consecutive, round-robin),
3 uneven nodes (4, 4, 3), and 25 nodes of 2 with one of 1, whose one rank
carries node pairs' 25 partners: more than go at once, so that step is
paced (collectives/alltoall_schedules.hpp, kNodePairsInFlight), as is
linear's exchange there at 4 KiB (kLinearPacedFromBlockBytes) but not below
(up to kLinearAllAtOnceMaxRanks processes the same rule holds whatever the
count, so no larger layout adds a schedule):
  - MPI_Alltoall through shim's SA, RD, leader, linear and node-pairs schedules: results checked
    byte by byte (sim_collectives --check), and the messages that cross
    between hosts during the call, read from SMPI's trace of the run
    (tracing/smpi/internals: every message, SMPI's own collectives'
    included), must equal what shim's in-memory executor counts for the same
    schedule on the same layout (sim_collectives --count). The rail step
    runs SMPI's basic_linear alltoall, a direct exchange, which is what the
    executor counts it as.
  - MPI_Bcast through shim's two-level tree (one message and pipelined
    segments): checked byte by byte.

  smoke.py BUILD_DIR
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import platforms  # noqa: E402
import simrun  # noqa: E402
from platforms import Layout  # noqa: E402

LAYOUTS = [Layout.regular(4, 4), Layout.regular(4, 4, round_robin=True), Layout((4, 4, 3)), Layout((2,) * 25 + (1,))]
ALGORITHMS = ("sa", "rd", "leader", "linear", "node-pairs")
ALLTOALL_SIZES = [1, 24, 1000, 4096]
BCAST_SIZES = [1, 300000]
WINDOW_SECONDS = 1.0  # sim_collectives --count: each call alone in a window this long


def trace_messages(trace_path):
    """(time, source rank, destination rank, tag) of every message in a Paje
    trace written by SMPI: PajeStartLink events, whose key is src_dst_tag_seq
    with ranks counted from 1. With tracing/smpi/internals, SMPI records a
    point-to-point call of the program twice (the call and its request: one
    MPI_Isend gives two events) and a message inside its own collectives,
    whose tags are negative, once."""
    start_link = None
    messages = []
    with open(trace_path) as f:
        for line in f:
            if line.startswith("%EventDef PajeStartLink"):
                start_link = line.split()[2]
                continue
            fields = line.split()
            if start_link is not None and fields and fields[0] == start_link:
                src, dst, tag = fields[6].split("_")[:3]
                messages.append((float(fields[1]), int(src) - 1, int(dst) - 1, int(tag)))
    return messages


def run(program, layout, op, variant, sizes, extra, options=(), trace=None):
    with tempfile.TemporaryDirectory(prefix="shim-smoke-") as tmp:
        platform_file = os.path.join(tmp, "platform.xml")
        host_file = os.path.join(tmp, "hosts")
        with open(platform_file, "w") as f:
            f.write(platforms.platform_xml("ib-onload", layout.nodes, layout.max_ppn))
        with open(host_file, "w") as f:
            f.write(platforms.hostfile("ib-onload", layout))
        command, env = simrun.command_and_env(program, platform_file, host_file, op, variant, sizes, extra)
        env["TMPDIR"] = tmp
        command[1:1] = list(options)
        if trace:
            command[1:1] = ["-trace", "-trace-file", trace, "--cfg=tracing/smpi/internals:yes",
                            "--cfg=tracing/precision:9"]
        done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout, done.stderr


def check_alltoall(program, layout, algorithm, sizes=ALLTOALL_SIZES):
    """One layout and algorithm: (checks, lines to print, failures)."""
    hosts = layout.hosts(platforms.host_names("ib-onload", layout.nodes))
    lines, failures, checks = [], [], 0
    with tempfile.TemporaryDirectory(prefix="shim-smoke-trace-") as tmp:
        trace = os.path.join(tmp, "run.trace")
        rc, out, err = run(program, layout, "alltoall", simrun.Variant("shim", algorithm), sizes,
                           ["--check", "--count", algorithm], ["--cfg=smpi/alltoall:basic_linear"], trace)
        what = f"alltoall {algorithm} on {layout.label()}"
        if rc != 0:
            return 0, lines, [f"{what}: exit {rc}: {err.strip()[-500:]}"]
        messages = trace_messages(trace)
    rows = simrun.parse_rows(out)
    if len(rows) != len(sizes):
        failures.append(f"{what}: {len(rows)} results for {len(sizes)} sizes")
    for row in rows:
        checks += 1
        # The window closes at start + 1 s, where the next messages (the reductions of
        # the result) begin: a microsecond short of it, so that rounding in the trace's
        # 9 digits cannot put them inside.
        events = [tag for t, s, d, tag in messages
                  if row["start"] <= t < row["start"] + WINDOW_SECONDS - 1e-6 and hosts[s] != hosts[d]]
        own = sum(1 for tag in events if tag >= 0)
        crossing = own // 2 + sum(1 for tag in events if tag < 0)
        if own % 2:
            failures.append(f"{what}, {row['bytes']} B: an odd number of point-to-point trace events")
        lines.append(f"{what}, {row['bytes']} B: data checked, {crossing} inter-node messages in the "
                     f"simulation, {row['expected_inter']} in the in-memory executor")
        if crossing != row["expected_inter"] or crossing <= 0:
            failures.append(f"{what}, {row['bytes']} B: {crossing} inter-node messages simulated, "
                            f"{row['expected_inter']} counted by the in-memory executor")
    return checks, lines, failures


def check_bcast(program, layout):
    rc, out, err = run(program, layout, "bcast", simrun.Variant("shim", "twolevel"), BCAST_SIZES,
                       ["--check", "--root", "5"])
    if rc != 0 or len(simrun.parse_rows(out)) != len(BCAST_SIZES):
        return 1, [], [f"bcast twolevel on {layout.label()}: exit {rc}: {err.strip()[-500:]}"]
    return 1, [f"bcast twolevel on {layout.label()}, root 5: data checked at {BCAST_SIZES} B"], []


def main():
    program = simrun.default_program(sys.argv[1] if len(sys.argv) > 1 else "build")
    # Each run is one single-threaded simulator: two at a time use both cores.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = [pool.submit(check_alltoall, program, layout, algorithm)
                 for layout in LAYOUTS for algorithm in ALGORITHMS]
        runs += [pool.submit(check_bcast, program, layout) for layout in LAYOUTS]
        results = [r.result() for r in runs]
    checks = sum(c for c, _, _ in results)
    failures = [f for _, _, fs in results for f in fs]
    for _, lines, _ in results:
        for line in lines:
            print(line)
    for failure in failures:
        print("FAIL " + failure)
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
