#!/usr/bin/env python3
"""Runs shim-info and checks that it describes the job the user would run.

1. 4 ranks as 2 virtual nodes x 2 (SHIM_NODE_SIZE=2 from the caller's
   environment), hardware the two-socket fixture (tests/data/two_socket_ib.xml):
   the node map, the HCA locality per package, the alltoall decision for
   8-byte blocks (linear on so few processes), server threads in each
   node's lowest rank (0 and 2), and an owner-computes decision for a window
   on MPI_COMM_WORLD.
2. 2 ranks as 2 nodes with SHIM_SERVER=0: no server threads, native.

Each time a real job (a program linked with shim that allocates a window on
MPI_COMM_WORLD and accumulates into it) runs with the same settings and
SHIM_VERBOSE=1, and shim-info's decision and every line shim prints must be
the job's: shim-info starts shim as an application's MPI_Init does.
"""
import argparse
import os
import re
import subprocess
import sys

DECISION = re.compile(r"^  MPI_Win_allocate on MPI_COMM_WORLD \(\d+ nodes?\): (every size -> (\w+): .*)$", re.M)
JOB_DECISION = re.compile(r"^shim: accumulate on window \d+ of MPI_COMM_WORLD[^,]*, \d+ node\(s\): (every size -> .*)$",
                          re.M)


class Failure(Exception):
    pass


def run(command, env):
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240, check=False)
    if result.returncode != 0:
        raise Failure(f"{' '.join(command)} exited with status {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def check_node_map(output):
    nodes = re.findall(r"^  node (\d+) \([^)]*\): (\d+) ranks?: (\S+)$", output, re.MULTILINE)
    if [(index, count) for index, count, _ in nodes] != [("0", "2"), ("1", "2")]:
        raise Failure(f"expected 2 nodes of 2 ranks in the node map, found {nodes}")
    if [ranks for _, _, ranks in nodes] != ["0-1", "2-3"]:
        raise Failure(f"expected nodes of ranks 0-1 and 2-3, found {nodes}")


def check_hca_locality(output):
    packages = dict(re.findall(r"NIC (mlx5_\d): openfabrics, package (\d+)", output))
    if set(packages) != {"mlx5_0", "mlx5_1"}:
        raise Failure(f"expected the HCAs mlx5_0 and mlx5_1, found {sorted(packages)}")
    if packages["mlx5_0"] == packages["mlx5_1"]:
        raise Failure(f"mlx5_0 and mlx5_1 should sit on different packages, found {packages}")


def check_decision(output, block, algorithm):
    found = re.findall(rf"^  {re.escape(block)}\s+(\S+)\s", output, re.MULTILINE)
    if found != [algorithm]:
        raise Failure(f"expected algorithm {algorithm!r} for {block} blocks, found {found}")


def shim_lines(text):
    return sorted(line for line in text.splitlines() if line.startswith("shim: "))


def compare_with_job(args, ranks, env, servers, path):
    """shim-info's server line and window decision are `servers` and `path`,
    and what it says and prints is what the real job gets."""
    info = run([args.mpiexec, "-n", ranks, args.shim_info], env)
    job = run([args.mpiexec, "-n", ranks, args.job], env)
    if "wrong=0" not in job.stdout:
        raise Failure(f"the job computed wrong results:\n{job.stdout}{job.stderr}")
    found = re.findall(r"^  server threads: (.*)$", info.stdout, re.M)
    if found != [servers]:
        raise Failure(f"expected the server line {servers!r}, found {found}:\n{info.stdout}")
    decisions = DECISION.findall(info.stdout)
    if [found_path for _, found_path in decisions] != [path]:
        raise Failure(f"expected one window decision {path!r}, found {decisions}:\n{info.stdout}")
    job_decisions = JOB_DECISION.findall(job.stderr)
    if job_decisions != [decisions[0][0]]:
        raise Failure(f"shim-info decided {decisions[0][0]!r}, the job {job_decisions}:\n{job.stderr}")
    if shim_lines(info.stderr) != shim_lines(job.stderr):
        raise Failure(f"shim's lines differ:\nshim-info:\n{info.stderr}\njob:\n{job.stderr}")
    return info


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--shim-info", required=True)
    parser.add_argument("--job", required=True, help="a program linked with shim that allocates a window")
    args = parser.parse_args()
    env = dict(os.environ, SHIM_VERBOSE="1")
    try:
        info = compare_with_job(args, "4", env, "running, one per node, in world ranks 0,2", "owner")
        check_node_map(info.stdout)
        check_hca_locality(info.stdout)
        check_decision(info.stdout, "8 B", "linear")
        print(info.stdout)
        no_servers = dict(env, SHIM_NODE_SIZE="1", SHIM_SERVER="0")
        print(compare_with_job(args, "2", no_servers, "none (SHIM_SERVER=0)", "native").stdout)
    except Failure as failure:
        print(f"check_shim_info: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
