#!/usr/bin/env python3
"""Server clustering settings that cannot be used cost exactly one line on rank
0, naming the variable and what is used instead, and the job still gives the
reference's results (server_clusters checks them, and that the servers'
buffers are the model's for the settings actually used). SHIM_VERBOSE prints
the cluster map once.
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("program")
    args = parser.parse_args()
    cases = [
        ({"SHIM_SERVER_CLUSTER": "0"}, r"^shim: SHIM_SERVER_CLUSTER='0' is not valid .*using the default"),
        ({"SHIM_SERVER_CLUSTER": "abc"}, r"^shim: SHIM_SERVER_CLUSTER='abc' is not valid .*using the default"),
        ({"SHIM_SERVER_CLUSTER": "9"}, r"^shim: SHIM_SERVER_CLUSTER=9 is more than the 3 nodes; using 3$"),
        ({"SHIM_SERVER_CREDITS": "0"}, r"^shim: SHIM_SERVER_CREDITS='0' is not valid .*using the default, 8$"),
        ({"SHIM_SERVER_BUFFER_SIZE": "100"}, r"^shim: SHIM_SERVER_BUFFER_SIZE='100' is not valid .*default, 16K$"),
        ({"SHIM_VERBOSE": "1", "SHIM_SERVER_CLUSTER": "2"},
         r"^shim: server clusters: 3 node servers in 1 clusters of at most 3; 8 credits of 16384 bytes; largest server: "),
        ({"SHIM_VERBOSE": "1"},
         r"^shim: server clusters: 3 node servers in 3 clusters of at most 1; .* width from SHIM_SERVER_CLUSTER=budget: "
         r"unclustered, a server would hold 3 processes x 128 KiB of request buffers, within 64 MiB: direct$"),
    ]
    base = {k: v for k, v in os.environ.items() if not k.startswith("SHIM_")}
    base["SHIM_NODE_SIZE"] = "1"
    failures = []
    for settings, expected in cases:
        result = subprocess.run([args.mpiexec, "-n", "3", args.program], env=dict(base, **settings),
                                capture_output=True, text=True, timeout=240)
        output = result.stdout + result.stderr
        shown = [line for line in output.splitlines()
                 if line.startswith("shim: SHIM_SERVER") or line.startswith("shim: server clusters")]
        if result.returncode != 0:
            failures.append(f"{settings}: the job failed (exit {result.returncode}):\n{output}")
        elif len(shown) != 1 or not re.search(expected, shown[0]):
            failures.append(f"{settings}: expected one line matching {expected!r}, got {shown}")
    for failure in failures:
        print(failure)
    print(f"check_server_settings: {len(cases)} cases, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
