#!/usr/bin/env python3
"""Runs shim-info (the command given as arguments) and checks its report for
a job of 2 virtual nodes x 2 ranks whose hardware is the two-socket fixture
(tests/data/two_socket_ib.xml): the node map, the HCA locality per package,
and the alltoall decision for 8-byte blocks."""

import re
import subprocess
import sys


def fail(message, output):
    print(output)
    print(f"check_shim_info: {message}", file=sys.stderr)
    sys.exit(1)


def check_node_map(output):
    nodes = re.findall(r"^  node (\d+) \([^)]*\): (\d+) ranks?: (\S+)$", output, re.MULTILINE)
    if [(index, count) for index, count, _ in nodes] != [("0", "2"), ("1", "2")]:
        fail(f"expected 2 nodes of 2 ranks in the node map, found {nodes}", output)
    if [ranks for _, _, ranks in nodes] != ["0-1", "2-3"]:
        fail(f"expected nodes of ranks 0-1 and 2-3, found {nodes}", output)


def check_hca_locality(output):
    packages = dict(re.findall(r"NIC (mlx5_\d): openfabrics, package (\d+)", output))
    if set(packages) != {"mlx5_0", "mlx5_1"}:
        fail(f"expected the HCAs mlx5_0 and mlx5_1, found {sorted(packages)}", output)
    if packages["mlx5_0"] == packages["mlx5_1"]:
        fail(f"mlx5_0 and mlx5_1 should sit on different packages, found {packages}", output)


def check_decision(output, block, algorithm):
    found = re.findall(rf"^  {re.escape(block)}\s+(\S+)\s", output, re.MULTILINE)
    if found != [algorithm]:
        fail(f"expected algorithm {algorithm!r} for {block} blocks, found {found}", output)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_shim_info.py COMMAND [ARGS...]")
    run = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=240, check=False)
    output = run.stdout + run.stderr
    if run.returncode != 0:
        fail(f"shim-info exited with status {run.returncode}", output)
    check_node_map(run.stdout)
    check_hca_locality(run.stdout)
    check_decision(run.stdout, "8 B", "sa")
    print(run.stdout)


if __name__ == "__main__":
    main()
