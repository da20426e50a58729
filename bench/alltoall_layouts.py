#!/usr/bin/python3 -B
"""alltoall_layouts: inter-node messages per call per node of every alltoall
algorithm, for several layouts of virtual nodes on this machine.

Runs `SHIM_NODE_SIZE=S mpiexec -n N bench/alltoall_latency --iters small` per
layout (counts from shim's counters; with more ranks than cores the times
mean nothing and are not shown). Writes alltoall_layouts.csv and
alltoall_layouts.png to --out and prints one table per layout, sizes with the
same counts merged. No root needed; about 17 minutes with simulations alongside
(--quick: 1 KiB to 64 KiB only).

  bench/alltoall_layouts.py [--build DIR] [--out DIR] [--quick]
"""
import driver

LAYOUTS = [("4 x 4", 16, 4), ("2 x 4", 8, 4), ("3+3+1", 7, 3), ("8 x 1", 8, 1)]  # (name, ranks, SHIM_NODE_SIZE)
ALGORITHMS = ["auto", "sa", "rd", "leader", "linear", "node-pairs"]
# At 16 B auto aggregates on 4 x 4 and sends flat on the smaller layouts
# (rule few-ranks-linear up to 12 processes); at 64 KiB it sends flat.
PLOTTED = [16, 65536]


def main():
    d = driver.Driver("alltoall_layouts", __doc__)
    results = {}

    def measure():
        flags = ["--iters", "small"] + (["--min", "1K", "--max", "64K"] if d.args.quick else [])
        for name, ranks, node_size in LAYOUTS:
            results[name] = d.bench("alltoall_latency", flags, ranks, f"{name} ({ranks} ranks, SHIM_NODE_SIZE="
                                    f"{node_size}): alltoall_latency --iters small", {"SHIM_NODE_SIZE": str(node_size)})

    status = d.measure(["bench/alltoall_latency"], measure)
    if not results:
        return status
    columns = ["layout", "bytes", "flat exchange"] + ALGORITHMS + ["auto ran"]
    rows = []
    for name, result in results.items():
        for size in sorted({int(r["bytes"]) for r in result.rows}):
            cells = {r["algorithm"]: r for r in result.where(bytes=size)}
            rows.append([name, size, cells["native"]["flat_inter_msgs_per_node"]] +
                        [cells[a]["inter_msgs_per_node"] for a in ALGORITHMS] + [cells["auto"]["ran"]])
    driver.write_csv(d.path("alltoall_layouts.csv"), columns, rows)
    for name in results:
        merged = []  # consecutive sizes with the same counts share one row
        for row in (r for r in rows if r[0] == name):
            if merged and merged[-1][2:] == row[2:]:
                merged[-1][1] = merged[-1][1].split(" - ")[0] + " - " + driver.format_size(row[1])
            else:
                merged.append([name, driver.format_size(row[1]), *row[2:]])
        driver.table(f"Inter-node messages per call per node, {name}", ["block", *columns[2:]],
                     [r[1:] for r in merged])
    driver.plot_bars(
        d.path("alltoall_layouts.png"), "MPI_Alltoall: inter-node messages per call per node (shim's counters)",
        "layout (nodes x ranks per node; 3+3+1: uneven)",
        [(f"block {driver.format_size(size)}", "messages per call per node", list(results),
          {label: [float(next(r for r in rows if r[0] == name and r[1] == size)[k]) for name in results]
           for k, label in [(2, "native (flat exchange)"), (3, "shim auto"), (4, "shim sa"), (5, "shim rd"),
                            (6, "shim leader"), (7, "shim linear"), (8, "shim node pairs")]})
         for size in PLOTTED])
    return status


if __name__ == "__main__":
    raise SystemExit(main())
