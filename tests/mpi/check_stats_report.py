#!/usr/bin/env python3
"""The SHIM_STATS report counts what a program did.

Runs stats_job (a known sequence of accumulates, mirrored-window calls and
collectives, which writes what it called to expected-*.txt) four times:
- SHIM_STATS=DIR/report-%j.txt: one file, named after rank 0's process id
  (Hydra names no job), holding the job's sums and maxima, per path and per
  server, equal to the program's own tally, and nothing on stderr;
- SHIM_STATS=DIR/rank-%r.txt: one file per process, each with its own counts;
- a name with an unknown placeholder, and a path in a missing directory:
  one line each saying so, and the report on stderr instead.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


class Failure(Exception):
    pass


def run(args, directory, stats):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIM_")}
    env.update(SHIM_STATS=stats, SHIM_NODE_SIZE=args.node_size)
    command = [args.mpiexec, "-n", str(args.np), args.program, directory]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    if result.returncode != 0:
        raise Failure(f"SHIM_STATS={stats}: {' '.join(command)} failed (exit {result.returncode}):\n"
                      f"{result.stdout}{result.stderr}")
    return result.stderr


def sections(lines):
    """{title: [rows split into words]} of a report, 'shim: ' prefixes removed."""
    found, title = {}, None
    for line in lines:
        line = line[len("shim: "):] if line.startswith("shim: ") else line
        if line.startswith("@--- "):
            title = line[5:].split(" (")[0]
            found[title] = []
        elif title is not None and line.strip():
            found[title].append(line.split())
    return found


def read_expected(path):
    expected = {"accumulate": {}, "mirror": {}, "server": {}, "pid": None}
    with open(path, encoding="utf-8") as f:
        for words in (line.split() for line in f):
            if words[0] == "pid":
                expected["pid"] = words[1]
            elif words[0] == "accumulate":
                expected["accumulate"][(words[1], words[2])] = [int(w) for w in words[3:]]
            elif words[0] == "mirror":
                expected["mirror"][words[1]] = [int(w) for w in words[2:]]
            elif words[0] == "server":
                expected["server"][int(words[1])] = [int(w) for w in words[2:]]
    return expected


def table(rows, keys):
    """Rows below the header, keyed by their first `keys` words, numbers as ints."""
    return {tuple(row[:keys]) if keys > 1 else row[0]: [int(w) for w in row[keys:] if w.isdigit()]
            for row in rows[1:] if row[0] != "total"}


def compare(what, seen, expected):
    if seen != expected:
        raise Failure(f"{what}: the report says {seen}, the program did {expected}")


def check_report(name, lines, expected, processes, per_process):
    found = sections(lines)
    for title in ("Alltoall", "Broadcast", "Accumulate family", "Accumulate servers", "Mirrored windows"):
        if title not in found:
            raise Failure(f"{name}: no '{title}' section in:\n" + "\n".join(lines))
    counts = [line for line in lines if "@ Counts" in line]
    scope = "only" if per_process else f"summed over {processes} processes"
    if len(counts) != 1 or scope not in counts[0]:
        raise Failure(f"{name}: the report should say its counts are {scope!r}: {counts}")

    # Accumulate family: ops and bytes (and, summed, the largest process's) per operation and path.
    compare(f"{name}: accumulate family", table(found["Accumulate family"], 2),
            {key: values for key, values in expected["accumulate"].items()})
    # Mirrored windows: calls, ops, bytes (and, summed, the largest process's calls).
    compare(f"{name}: mirrored windows", table(found["Mirrored windows"], 1), expected["mirror"])
    for title in ("Alltoall", "Broadcast"):
        calls = sum(int(row[2]) for row in found[title][1:])
        compare(f"{name}: {title} calls", calls, 1 if per_process else processes)
    if per_process:
        return
    # Requests each node's server applied, and their bytes: the other-node operations aimed at it.
    servers = {int(row[0]): [int(row[2]), int(row[3])] for row in found["Accumulate servers"][1:]}
    compare(f"{name}: server requests and bytes per node", servers, expected["server"])
    # The same servers' pools: with one server per cluster (the default) nothing is forwarded, and a server
    # that applied requests received messages from origins.
    pools = {int(row[0]): [int(w) for w in row[1:]] for row in found.get("Server request pools", [])[1:]}
    compare(f"{name}: nodes in the server pool table", sorted(pools), sorted(servers))
    for node, (_, _, _, applied, forwarded, from_servers, peers) in pools.items():
        compare(f"{name}: node {node}'s forwarded and from-server messages", [forwarded, from_servers], [0, 0])
        if expected["server"].get(node, [0])[0] > 0 and (applied == 0 or peers == 0):
            raise Failure(f"{name}: node {node}'s server applied requests but its pool table says {pools[node]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--node-size", required=True)
    parser.add_argument("program")
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="shim-stats-") as directory:
        def steps():
            stderr = run(args, directory, os.path.join(directory, "report-%j.txt"))
            expected = read_expected(os.path.join(directory, "expected-sum.txt"))
            reports = sorted(f for f in os.listdir(directory) if f.startswith("report-"))
            if reports != [f"report-{expected['pid']}.txt"]:
                raise Failure(f"%j: expected report-{expected['pid']}.txt (rank 0's process id), found {reports}")
            if "shim: @" in stderr:
                raise Failure(f"a report written to a file also went to stderr:\n{stderr}")
            with open(os.path.join(directory, reports[0]), encoding="utf-8") as f:
                check_report("summed report", f.read().splitlines(), expected, args.np, False)

            run(args, directory, os.path.join(directory, "rank-%r.txt"))
            for rank in range(args.np):
                path = os.path.join(directory, f"rank-{rank}.txt")
                if not os.path.exists(path):
                    raise Failure(f"%r: no {path}")
                with open(path, encoding="utf-8") as f:
                    check_report(f"rank {rank}'s report", f.read().splitlines(),
                                 read_expected(os.path.join(directory, f"expected-{rank}.txt")), args.np, True)

            for value, complaint in [
                    (os.path.join(directory, "bad-%q.txt"),
                     re.escape(f"shim: SHIM_STATS='{directory}/bad-%q.txt': %q is not a placeholder")),
                    (os.path.join(directory, "missing", "report.txt"),
                     re.escape(f"shim: SHIM_STATS: cannot write the report to '{directory}/missing/report.txt' "
                               "(No such file or directory); it goes to stderr instead"))]:
                stderr = run(args, directory, value)
                lines = stderr.splitlines()
                said = [line for line in lines if line.startswith("shim: SHIM_STATS")]
                if len(said) != 1 or not re.match(complaint, said[0]):
                    raise Failure(f"SHIM_STATS={value}: expected one line matching {complaint!r}, got {said}")
                if any(f.startswith("bad-") for f in os.listdir(directory)):
                    raise Failure(f"SHIM_STATS={value}: a file was written under the malformed name")
                check_report(f"SHIM_STATS={value} (stderr)", lines, expected, args.np, False)

        try:
            steps()
        except Failure as failure:
            failures.append(str(failure))
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print(f"ok: the SHIM_STATS report counts what stats_job did ({args.np} ranks, SHIM_NODE_SIZE={args.node_size})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
