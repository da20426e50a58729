#!/usr/bin/env python3
"""Side-by-side tables for tools/demo, from the captured output of
bench/plain_alltoall runs (stdout and stderr together).

  demo_report.py nodes --native FILE --shim FILE
      the multi-node run: per block size, the algorithm shim ran, the
      inter-node messages and bytes per call per node it counted beside a
      flat exchange's (from SHIM_STATS and SHIM_VERBOSE), and the timings
  demo_report.py single --native FILE... --shim FILE...
      the single-node run: native vs shim latency and their ratio; with
      several files per side (alternating runs) the median per size is used
"""
import argparse
import re
import statistics
import sys

# "shim: alltoall on MPI_COMM_WORLD (8 ranks): 8 ranks = 2 nodes x 4, ...;
#  block 8 B (class <=8 B) -> sa [aggregate]: reason"
VERBOSE = re.compile(r"^shim: alltoall on (?P<comm>.+?): (?P<layout>.*?); block (?P<block>.+?) "
                     r"\(class (?P<cls><=[^)]+)\) -> (?P<algo>\w+) \[(?P<rule>[^\]]+)\]: (?P<reason>.*)$")
# "shim: stats: alltoall algo=sa block<=8 B calls=32 ops=4 ... flat_inter_bytes=1024"
STATS = re.compile(r"^shim: stats: alltoall algo=(?P<algo>\w+) block(?P<cls><=\d+ \w+) (?P<fields>.*)$")
UNIFORM_NODES = re.compile(r"= (\d+) nodes? x \d+")
UNEVEN_NODES = re.compile(r" on (\d+) nodes \(")


class ReportError(Exception):
    pass


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError as error:
        raise ReportError(f"cannot read {path}: {error.strerror}") from error


def latencies(path):
    """{block bytes: latency in us} from plain_alltoall's table."""
    table = {}
    for line in read(path):
        fields = line.split()
        if len(fields) == 3 and not line.startswith("#") and all(f.replace(".", "", 1).isdigit() for f in fields):
            table[int(fields[0])] = float(fields[2])
    if not table:
        raise ReportError(f"{path}: no plain_alltoall result lines (did the run fail?)")
    return table


def format_bytes(value):
    """Bytes as shim writes them (format_bytes in alltoall_policy.cpp)."""
    units = ["B", "KiB", "MiB", "GiB"]
    unit = 0
    while unit + 1 < len(units) and value >= 1024 and value % 1024 == 0:
        value //= 1024
        unit += 1
    return f"{value} {units[unit]}"


def size_class(block):
    """shim's size-class label for a block: '<=' and the next power of two."""
    return "<=" + format_bytes(1 << max(0, (block - 1).bit_length()))


def shim_lines(path):
    """(decisions by class, stats rows by class, nodes) from shim's stderr."""
    decisions, stats, nodes = {}, {}, None
    for line in read(path):
        match = VERBOSE.match(line)
        if match and match["comm"].startswith("MPI_COMM_WORLD"):
            decisions[match["cls"]] = match
            found = UNIFORM_NODES.search(match["layout"]) or UNEVEN_NODES.search(match["layout"])
            if found:
                nodes = int(found.group(1))
        match = STATS.match(line)
        if match:
            fields = dict(item.split("=", 1) for item in match["fields"].split())
            stats.setdefault(match["cls"], []).append((match["algo"], fields))
    if not stats:
        raise ReportError(f"{path}: no 'shim: stats:' lines; was it run with LD_PRELOAD=libshim.so and SHIM_STATS=1?")
    return decisions, stats, nodes


def number(value):
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"


def print_table(header, rows, text_columns=()):
    """Numbers right-aligned, the columns named in text_columns left-aligned."""
    widths = [max(len(str(row[c])) for row in [header] + rows) for c in range(len(header))]
    for row in [header] + rows:
        cells = [str(cell).ljust(width) if header[c] in text_columns else str(cell).rjust(width)
                 for c, (cell, width) in enumerate(zip(row, widths))]
        print("  ".join(cells).rstrip())


def nodes_report(args):
    native = latencies(args.native)
    shim = latencies(args.shim)
    decisions, stats, nodes = shim_lines(args.shim)
    if nodes is None:
        raise ReportError(f"{args.shim}: no SHIM_VERBOSE decision line with the node layout; run with SHIM_VERBOSE=1")
    header = ["block", "shim ran", "rule", "inter msgs", "inter bytes", "flat msgs", "flat bytes",
              "native us", "shim us", "shim/native"]
    rows = []
    marked = False
    for block in sorted(set(native) | set(shim)):
        cls = size_class(block)
        entries = stats.get(cls, [])
        decision = decisions.get(cls)
        algos = "+".join(algo for algo, _ in entries) or "?"
        rule = decision["rule"] if decision else "?"
        ops = sum(int(f["ops"]) for _, f in entries)
        per = 1 / (ops * nodes) if ops else 0.0

        def total(key):
            return sum(int(f[key]) for _, f in entries if f[key] != "n/a")

        visible = entries and all(f["inter_msgs"] != "n/a" for _, f in entries)
        flat_msgs, flat_bytes = total("flat_inter_msgs") * per, total("flat_inter_bytes") * per
        if visible:
            msgs, nbytes = number(total("inter_msgs") * per), number(total("inter_bytes") * per)
        else:
            # shim ran native: MPICH's own messages are not visible, so these are the flat figures.
            msgs, nbytes = number(flat_msgs) + "*", number(flat_bytes) + "*"
            marked = True
        t_native, t_shim = native.get(block), shim.get(block)
        ratio = f"{t_shim / t_native:.2f}" if t_native and t_shim else "-"
        rows.append([format_bytes(block), algos, rule, msgs, nbytes, number(flat_msgs), number(flat_bytes),
                     f"{t_native:.0f}" if t_native else "-", f"{t_shim:.0f}" if t_shim else "-", ratio])
    print(f"inter-node messages and bytes per call per node, as shim counted them (SHIM_STATS: inter_msgs / ops / "
          f"{nodes} nodes), beside a flat exchange's (flat_inter_msgs / ops / nodes); latency = plain_alltoall's "
          f"max-over-ranks average per call")
    print_table(header, rows, ("shim ran", "rule"))
    if marked:
        print("* shim ran native MPI_Alltoall: MPICH's own messages are not visible to shim; these are a flat "
              "exchange's figures")
    print()
    if args.ranks > args.cores:
        print(f"NOTE: these runs put {args.ranks} ranks on {args.cores} cores. MPICH busy-polls, so every collective "
              "waits for the OS scheduler to run all ranks: the native and shim times above reflect OS scheduling, "
              "not the algorithms. The message and byte counts are the real result: they are what each schedule "
              "puts on the inter-node links.")
    else:
        print(f"NOTE: {args.ranks} ranks on {args.cores} cores, one core each; the virtual nodes share one host, so "
              "the inter-node messages above travel the same path as intra-node ones and the timings show shim's "
              "costs, not network savings. The message and byte counts are what a real cluster would carry.")


def single_report(args):
    native_runs = [latencies(path) for path in args.native]
    shim_runs = [latencies(path) for path in args.shim]
    decisions = {}
    for line in read(args.decisions):
        match = VERBOSE.match(line)
        if match and match["comm"].startswith("MPI_COMM_WORLD"):
            decisions[match["cls"]] = match
    if not decisions:
        raise ReportError(f"{args.decisions}: no SHIM_VERBOSE decision lines; was it run with SHIM_VERBOSE=1?")
    header = ["block", "native us", "shim us", "shim/native", "shim ran"]
    measured = []
    for block in sorted(set().union(*native_runs) & set().union(*shim_runs)):
        t_native = statistics.median(run[block] for run in native_runs if block in run)
        t_shim = statistics.median(run[block] for run in shim_runs if block in run)
        decision = decisions.get(size_class(block))
        measured.append((block, t_native, t_shim, decision))
    rows = [[format_bytes(block), f"{t_native:.2f}", f"{t_shim:.2f}", f"{t_shim / t_native:.2f}",
             f"{decision['algo']} [{decision['rule']}]" if decision else "?"]
            for block, t_native, t_shim, decision in measured]
    runs = len(native_runs)
    print(f"latency per call, us (plain_alltoall's max-over-ranks average; median of {runs} alternating "
          f"native/shim run{'s' if runs > 1 else ''})")
    print_table(header, rows, ("shim ran",))
    if measured and all(decision and decision["algo"] == "native" for *_, decision in measured):
        block, t_native, t_shim, _ = measured[0]
        print(f"shim chose native MPI_Alltoall at every size (one node: nothing to aggregate), so shim/native is "
              f"the cost of interposition alone: on a single-node job with nothing observing shim, MPI_Alltoall "
              f"passes straight to PMPI_Alltoall ({t_shim - t_native:+.2f} us per call at {format_bytes(block)}). "
              f"These are separate program runs, whose run-to-run spread is several percent; bench/alltoall_latency "
              f"measures the same thing alternating inside one run.")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    nodes = commands.add_parser("nodes", help="multi-node run: algorithm, message counts, timings")
    nodes.add_argument("--native", required=True, help="output of the run without shim")
    nodes.add_argument("--shim", required=True, help="output of the run with shim, SHIM_STATS=1 and SHIM_VERBOSE=1")
    nodes.add_argument("--ranks", type=int, required=True, help="MPI ranks of the runs (for the note)")
    nodes.add_argument("--cores", type=int, required=True, help="cores of the machine (for the note)")
    single = commands.add_parser("single", help="single-node run: native vs shim latency")
    single.add_argument("--native", nargs="+", required=True, help="outputs of the runs without shim")
    single.add_argument("--shim", nargs="+", required=True, help="outputs of the timed runs with shim")
    single.add_argument("--decisions", required=True, help="output of a run with shim and SHIM_VERBOSE=1")
    args = parser.parse_args()
    try:
        (nodes_report if args.command == "nodes" else single_report)(args)
    except ReportError as error:
        print(f"demo_report.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
