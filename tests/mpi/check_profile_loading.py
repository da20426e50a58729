#!/usr/bin/env python3
"""SHIM_PROFILE end to end, on a program that is not linked to shim.

A profile that cannot be used (missing, malformed, truncated, or describing
other hosts) costs exactly one line on rank 0, naming the file and the reason,
and the job runs correctly without it. A good profile is used: with virtual
nodes spread over its subnets, the broadcast runs ECO; its NIC class and
send cost and node link bandwidth steer the alltoall policy unless SHIM_NIC,
SHIM_SEND_COST_NS and SHIM_NODE_BANDWIDTH say otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def sanitizer_runtimes(library):
    out = subprocess.run(["ldd", library], capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(r"=> (\S*lib(?:asan|ubsan)\.so\S*)", out)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--libshim", required=True)
    parser.add_argument("--good-profile", required=True)
    parser.add_argument("--alltoall-program", required=True)
    parser.add_argument("program")
    args = parser.parse_args()

    with open(args.good_profile, encoding="utf-8") as f:
        good = f.read()
    scratch = tempfile.mkdtemp()
    def write(name, text):
        path = os.path.join(scratch, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path
    cases = [
        ("missing", os.path.join(scratch, "absent.json"), r"absent\.json: cannot be read"),
        ("malformed", write("malformed.json", good.replace('"version": 1,', '"version": 1,,')),
         r"malformed\.json: line \d+, column \d+: "),
        ("truncated", write("truncated.json", good[: len(good) // 2]), r"truncated\.json: line \d+, column \d+: "),
        ("other hosts", write("other.json", good.replace('"vnode0"', '"elsewhere"')),
         r"other\.json: host 'vnode0' of this job \(rank 0\) is not in the profile"),
    ]

    base = {k: v for k, v in os.environ.items() if not k.startswith("SHIM_") and k != "LD_PRELOAD"}
    base["LD_PRELOAD"] = " ".join(sanitizer_runtimes(args.libshim) + [args.libshim])
    base["SHIM_NODE_SIZE"] = "1"
    command = [args.mpiexec, "-n", "4", args.program]
    failures = []
    for name, path, reason in cases:
        env = dict(base, SHIM_PROFILE=path)
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
        output = result.stdout + result.stderr
        lines = [line for line in output.splitlines() if line.startswith("shim: SHIM_PROFILE")]
        if result.returncode != 0 or "wrong=0" not in output:
            failures.append(f"{name}: the job failed (exit {result.returncode}):\n{output}")
        elif len(lines) != 1 or not re.search(reason, lines[0]) or "continuing without" not in lines[0]:
            failures.append(f"{name}: expected one line matching /{reason}/, got {lines}")

    env = dict(base, SHIM_PROFILE=args.good_profile, SHIM_VERBOSE="1")
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    output = result.stdout + result.stderr
    if result.returncode != 0 or "wrong=0" not in output:
        failures.append(f"good profile: the job failed:\n{output}")
    elif not re.search(r"^shim: bcast on MPI_COMM_WORLD .* -> eco \[measured-subnets\]", output, re.M):
        failures.append(f"good profile: no ECO decision announced:\n{output}")
    elif "SHIM_PROFILE" in output:
        failures.append(f"good profile: complaint about a good file:\n{output}")

    def check_alltoall_decision(profile, extra, what, *patterns, ranks=4, nic=r"\w+", link=None):
        """Runs the alltoall program (virtual nodes of 2, 4 B blocks first) and checks that every one of
        `patterns` matches a decision it announces, made for NIC class `nic`; with `link`, that the
        decisions name that node link bandwidth ("": none)."""
        env = dict(base, SHIM_PROFILE=profile, SHIM_VERBOSE="1", SHIM_NODE_SIZE="2", **extra)
        command = [args.mpiexec, "-n", str(ranks), args.alltoall_program]
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
        output = result.stdout + result.stderr
        if result.returncode != 0 or "wrong=0" not in output:
            failures.append(f"{what} {extra}: the job failed:\n{output}")
            return
        for pattern in patterns:
            if not re.search(r"^shim: alltoall on MPI_COMM_WORLD .*, NIC " + nic + r"; block 4 B .*" + pattern,
                             output, re.M):
                failures.append(f"{what} {extra}: expected /{pattern}/ for 4 B blocks:\n{output}")
        if link is not None and ((link not in output) if link else ("node link" in output)):
            failures.append(f"{what} {extra}: expected {link or 'no node link'} in the decisions:\n{output}")

    # The profile's NIC class reaches the alltoall policy; SHIM_NIC wins over
    # it. Two nodes of two take the same rules with either class (only
    # beyond 64 node-pair partners does an offload NIC change the choice):
    # on so few processes every block goes straight to its rank.
    offload = write("offload.json", good.replace('"class": "onload"', '"class": "offload"'))
    check_alltoall_decision(offload, {}, "offload profile", r"-> linear \[few-ranks-linear\]", nic="offload")
    check_alltoall_decision(offload, {"SHIM_NIC": "onload"}, "offload profile", r"-> linear \[few-ranks-linear\]",
                            nic="onload")

    # The profile's send cost reaches it too: at TCP's 6.4 us per message
    # node pairs' one partner beats linear's extra messages; at the onload
    # platform's 25 ns linear takes the 4 B blocks.
    tcp_text = good.replace('"bcast_k":', '"send_cost_seconds": 6.39e-06, "bcast_k":')
    tcp = write("tcp.json", tcp_text)
    check_alltoall_decision(tcp, {}, "send-cost profile", r"-> node-pairs \[node-pairs\].*6390 ns per message", link="")
    check_alltoall_decision(tcp, {"SHIM_SEND_COST_NS": "25"}, "send-cost profile", r"-> linear \[few-ranks-linear\]")
    # The profile's pair throughput gives the node's link bandwidth (half
    # the highest, which counts both directions); SHIM_NODE_BANDWIDTH wins
    # over it, 0 making it unknown again.
    linked = write("linked.json", tcp_text.replace('"pair_throughput": []', '"pair_throughput": [1.5e9, 2.5e9]'))
    check_alltoall_decision(linked, {}, "bandwidth profile", r"-> node-pairs", link="node link 1250000000 B/s")
    check_alltoall_decision(linked, {"SHIM_NODE_BANDWIDTH": "3G"}, "bandwidth profile", r"-> node-pairs",
                            link="node link 3221225472 B/s")
    check_alltoall_decision(linked, {"SHIM_NODE_BANDWIDTH": "0"}, "bandwidth profile", r"-> node-pairs", link="")
    # 11 ranks on 6 nodes (the last of one): MPI's Bruck sends 4 messages
    # per rank where node pairs and SA send 5, so the policy leaves the call
    # to MPI, unless it is in place (MPICH then exchanges pairwise, p - 1
    # steps), when node pairs run.
    check_alltoall_decision(tcp, {}, "send-cost profile, separate buffers and in place",
                            r"-> native \[costly-sends-bruck\]", r"-> node-pairs \[node-pairs\]", ranks=11)

    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("ok: bad profiles cost one line each and are ignored; a good one makes the broadcast ECO and "
              "its NIC class, send cost and bandwidth steer the alltoall policy unless SHIM_NIC / SHIM_SEND_COST_NS / "
              "SHIM_NODE_BANDWIDTH are set")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
