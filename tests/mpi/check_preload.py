#!/usr/bin/env python3
"""Proves interposition on a program that is not linked to shim.

Runs the program under mpiexec three times: plainly, where no shim line may
appear; with LD_PRELOAD=libshim.so, SHIM_STATS=1 and a forced algorithm, where
the program must still compute correct results and shim's stats must account
for every MPI_Alltoall call it made (calls reported by the program x ranks);
and preloaded with malformed settings, which must cost one line each on rank
0 and nothing else.
"""
import argparse
import os
import re
import subprocess
import sys


def sanitizer_runtimes(library):
    """A sanitized libshim needs its runtimes preloaded ahead of it."""
    out = subprocess.run(["ldd", library], capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(r"=> (\S*lib(?:asan|ubsan)\.so\S*)", out)]


def run(command, env):
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    return result.returncode, result.stdout + result.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np", default="4")
    parser.add_argument("--libshim", required=True)
    parser.add_argument("--node-size", default="2")
    parser.add_argument("--algorithm", default="sa")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [args.mpiexec, "-n", args.np] + args.program
    ranks = int(args.np)

    base = {k: v for k, v in os.environ.items() if not k.startswith("SHIM_") and k != "LD_PRELOAD"}
    failures = []

    code, output = run(command, base)
    if code != 0 or "wrong=0" not in output:
        failures.append(f"plain run failed (exit {code}):\n{output}")
    if re.search(r"^shim: ", output, re.M):
        failures.append("shim printed something without being preloaded: the program is linked to it")

    preload = dict(base)
    preload["LD_PRELOAD"] = " ".join(sanitizer_runtimes(args.libshim) + [args.libshim])
    preload.update(SHIM_STATS="1", SHIM_ALLTOALL=args.algorithm, SHIM_NODE_SIZE=args.node_size)
    code, output = run(command, preload)
    made = re.search(r"calls=(\d+) wrong=(\d+)", output)
    if code != 0 or not made or made.group(2) != "0":
        failures.append(f"preloaded run failed (exit {code}):\n{output}")
    else:
        counted = sum(int(m.group(2)) for m in
                      re.finditer(r"stats: alltoall algo=(\w+) .*? calls=(\d+)", output) if m.group(1) == args.algorithm)
        expected = int(made.group(1)) * ranks
        if counted != expected:
            failures.append(f"shim counted {counted} {args.algorithm} calls, the program made {expected}:\n{output}")

    # Typos must neither crash nor hang: one line each, from rank 0 only,
    # and the job runs with the defaults.
    typos = dict(base)
    typos["LD_PRELOAD"] = preload["LD_PRELOAD"]
    typos.update(SHIM_ALLTOALL="sx", SHIM_NODE_SIZE="two")
    code, output = run(command, typos)
    complaints = [line for line in output.splitlines() if line.startswith("shim: SHIM_")]
    expected = ["shim: SHIM_ALLTOALL='sx' is not valid (accepted: auto|native|sa|rd|leader|linear|node-pairs); using the default, auto",
                "shim: SHIM_NODE_SIZE='two' is not valid (accepted: integer >= 1); using the default, unset (detect "
                "nodes)"]
    if code != 0 or "wrong=0" not in output or sorted(complaints) != expected:
        failures.append(f"malformed settings: exit {code}, complaints {complaints}:\n{output}")

    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print(f"ok: {' '.join(args.program)} intercepted via LD_PRELOAD ({args.algorithm}, {ranks} ranks)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
