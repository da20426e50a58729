#!/usr/bin/python3
"""report: plots and a markdown summary from a sweep's CSV (bench/sim/sweep).

  bench/sim/report.py small|full|headline  # writes docs/scale/<name>.md and docs/scale/<name>-*.png
  bench/sim/report.py platforms         # writes docs/scale/platforms.md

Uses Debian's python3-matplotlib (hence /usr/bin/python3). Definitions:
  best selection   the fastest of SMPI's mpich, ompi, mvapich2 and impi
                   selections at the point
  best single      the fastest single SMPI algorithm run at the point
  best shim option the fastest of shim's algorithms and native (native is
                   MPICH's selection, what shim falls back to)
  auto             shim's policy (SHIM_ALLTOALL / SHIM_BCAST unset)
"""
import collections
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import platforms  # noqa: E402  (bench/sim/platforms.py, beside this script)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "docs", "scale")
SELECTORS = ["mpich", "ompi", "mvapich2", "impi"]
NETWORKS_VARIANTS = ["shim-auto", "shim-sa", "shim-node-pairs", "shim-linear", "shim-leader", "mpich"]
COMMANDS = {"small": "bench/sim/sweep small && bench/sim/report.py small",
            # The part of the full grid run so far: 16 and 32 nodes, 64 x 1-16, 128 x 1-2, broadcasts
            # at 128 x 4-8, 128 x 4 alltoall to 1 KiB, ECO-like broadcasts at 16-128 nodes, the offload
            # and Ethernet platforms' broadcasts at 64 nodes and a few points of the uneven layouts
            # (docs/scale/README.md gives each run's command).
            "full": "bench/sim/sweep full --platforms ib-onload --layouts "
                    "16x1,16x2,16x4,16x8,16x16,32x1,32x2,32x4,32x8,32x16,64x1,64x2,64x4,64x8,128x1 --timeout 900 && "
                    "bench/sim/sweep full --platforms hetero --layouts 16x1,16x8,64x1,64x8,128x1 --timeout 900 && "
                    "bench/sim/sweep full --platforms ib-onload --layouts 128x4,128x8 --ops bcast --timeout 900 && "
                    "bench/sim/sweep full --platforms ib-onload --layouts 64x16 --ops bcast && "
                    "bench/sim/sweep full --platforms ib-onload --layouts "
                    "64x16 --ops alltoall --sizes 1024 --only shim-auto,shim-sa,shim-rd,shim-leader,"
                    "shim-node-pairs,mpich,mvapich2,impi,smpi-bruck,smpi-pair && bench/sim/sweep full --platforms "
                    "ib-onload --layouts 128x2 --timeout 900 && bench/sim/sweep full --platforms hetero --layouts 128x8 "
                    "--ops bcast --sizes 1,4,16,64,256,1024,4096 --only shim-auto,shim-eco,mpich,ompi,mvapich2,impi && "
                    "bench/sim/sweep full --platforms ib-offload,eth-25g,eth-1g --layouts 64x4 --ops bcast "
                    "--timeout 900 && bench/sim/sweep full --platforms ib-offload,eth-25g,eth-1g --layouts "
                    "64x16,63x8+1x3 --ops bcast --only shim-auto,shim-twolevel,mpich,ompi,mvapich2,impi --timeout 900 "
                    "&& bench/sim/sweep full --platforms ib-onload --layouts 128x4 --ops alltoall --sizes 256,512,1024 "
                    "--only shim-auto,shim-sa,shim-node-pairs,mpich,ompi,mvapich2,impi --timeout 1200 "
                    "&& bench/sim/sweep full --platforms ib-onload --layouts 128x16 --ops bcast --sizes 16,16384,1048576 "
                    "--only shim-auto,shim-twolevel,mpich,ompi,mvapich2,impi --jobs 1 --timeout 1500 "
                    "&& bench/sim/sweep full --platforms ib-onload --layouts 128x8 --ops alltoall --sizes 1,4,16,64 "
                    "--only shim-auto,shim-sa,shim-node-pairs,mpich,ompi,mvapich2,impi --jobs 1 --timeout 900 "
                    "&& bench/sim/report.py full",
            "few-nodes": "bench/sim/sweep few-nodes --timeout 900 && bench/sim/report.py few-nodes",
            "headline": "bench/sim/sweep headline && bench/sim/report.py headline",
            "tiny": "bench/sim/sweep tiny --only shim-auto,shim-sa,shim-node-pairs,mpich && bench/sim/report.py tiny",
            "bcast": "bench/sim/sweep bcast && bench/sim/report.py bcast",
            "blocks": "bench/sim/sweep blocks --timeout 400 --platforms ib-onload && bench/sim/sweep blocks --timeout 400 "
                      "--platforms ib-offload,eth-25g --only shim-rd," + ",".join(NETWORKS_VARIANTS)
                      + " && bench/sim/report.py blocks",
            "networks": "bench/sim/sweep networks --only " + ",".join(NETWORKS_VARIANTS) + " && bench/sim/report.py networks"}


def size_label(b):
    if b >= 1 << 20:
        return f"{b >> 20} MiB"
    if b >= 1 << 10:
        return f"{b >> 10} KiB"
    return f"{b} B"


def load(name):
    points = collections.defaultdict(dict)   # (platform, layout, op, bytes) -> {variant: seconds}
    meta = {}
    errors = []
    with open(os.path.join(OUT, f"{name}.csv")) as f:
        for row in csv.DictReader(f):
            key = (row["platform"], row["layout"], row["op"], int(row["bytes"]))
            meta[key] = (int(row["nodes"]), int(row["max_ppn"]), int(row["ranks"]))
            if row["seconds"]:
                points[key][row["variant"]] = float(row["seconds"])
            else:
                errors.append((key, row["variant"], row["error"]))
    return points, meta, errors


def best(times, names):
    found = [(times[n], n) for n in names if n in times]
    return min(found) if found else (None, None)


SHIM_ALLTOALL_ALGORITHMS = ["shim-sa", "shim-rd", "shim-leader", "shim-linear", "shim-node-pairs"]


def shim_options(op):
    return (SHIM_ALLTOALL_ALGORITHMS if op == "alltoall" else ["shim-eco", "shim-twolevel"]) + ["mpich"]


def analyse(points):
    rows = []
    for key, times in sorted(points.items()):
        platform, layout, op, size = key
        auto = times.get("shim-auto")
        sel, sel_name = best(times, SELECTORS)
        single, single_name = best(times, [v for v in times if v.startswith("smpi-")])
        opt, opt_name = best(times, shim_options(op))
        rows.append({"key": key, "auto": auto, "sel": sel, "sel_name": sel_name, "single": single,
                     "single_name": single_name, "opt": opt, "opt_name": opt_name, "times": times})
    return rows


def fmt_us(s):
    return "-" if s is None else (f"{s * 1e6:.1f}" if s < 1e-2 else f"{s * 1e3:.2f} ms")


def ratio(a, b):
    return None if a is None or b is None else a / b


def link_bound(platform, nodes, ppn, block):
    """The least time any alltoall can take on a regular layout: every node
    sends (nodes - 1) x ppn^2 blocks to other nodes through its one link."""
    return (nodes - 1) * ppn * ppn * block / platforms.PLATFORMS[platform].bandwidth.value


def subnet_bound(platform, size):
    """The least time any broadcast can take across subnets: every subnet
    but the root's receives the whole message through its one uplink."""
    return size / platforms.link_bandwidth(platforms.PLATFORMS[platform], platforms.HET_UPLINK)


def targets(rows, meta):
    by = {r["key"]: r for r in rows}
    out = ["## Performance targets (model)", ""]

    def alltoall_target(nodes_label):
        lines = []
        worst = 0
        seen = False
        for size in (1, 4, 16, 64, 256, 512):
            r = by.get(("ib-onload", nodes_label, "alltoall", size))
            if not r or r["auto"] is None or r["sel"] is None:
                continue
            seen = True
            q = r["auto"] / r["sel"]
            worst = max(worst, q)
            shim_best, _ = best(r["times"], SHIM_ALLTOALL_ALGORITHMS)
            shim_ratio = "not run" if shim_best is None else f"{shim_best / r['sel']:.2f}"
            nodes, ppn, _ = meta[r["key"]]
            bound = link_bound("ib-onload", nodes, ppn, size)
            lines.append(f"| {nodes_label} | {size_label(size)} | {fmt_us(r['auto'])} | {fmt_us(r['sel'])} "
                         f"({r['sel_name']}) | **{q:.2f}** | {shim_ratio} | {fmt_us(bound)} | "
                         f"{bound / r['sel']:.2f} |")
        return lines, worst, seen

    out += ["### Alltoall, 1-512 B, onload platform: auto <= 0.33x the best selection", "",
            "Link bound: the time each node's link needs for the bytes the node sends to other nodes, "
            "(nodes - 1) x ppn^2 x block / link bandwidth; no algorithm is faster, so where bound / best "
            "exceeds 0.33 the target is out of reach on this platform.", "",
            "| layout | block | auto us | best selection us | auto / best | best shim algorithm / best "
            "| link bound us | bound / best |",
            "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for label in ("64x16", "128x16"):
        lines, worst, seen = alltoall_target(label)
        out += lines
        verdicts.append((label, worst, seen))
    out.append("")
    for label, worst, seen in verdicts:
        out.append(f"- {label}: " + ("not run" if not seen else
                   f"worst auto / best selection {worst:.2f}: **{'met' if worst <= 0.33 else 'not met'}**"))
    out.append("")

    viol = [r for r in rows if r["auto"] is not None and r["sel"] is not None and r["auto"] > 1.05 * r["sel"]]
    total = sum(1 for r in rows if r["auto"] is not None and r["sel"] is not None)
    out += ["### auto never slower than 1.05x the best selection (every point, uneven layouts included)", "",
            f"{total - len(viol)} of {total} points within 1.05x: **{'met' if not viol else 'not met'}**. "
            f"Points over 1.05x: {len(viol)}" + (" (the 25 worst below)." if viol else "."), ""]
    if viol:
        out += ["| platform | layout | op | size | auto us | best selection us | auto / best |", "|---|---|---|---|---|---|---|"]
        for r in sorted(viol, key=lambda r: -r["auto"] / r["sel"])[:25]:
            p, l, o, s = r["key"]
            out.append(f"| {p} | {l} | {o} | {size_label(s)} | {fmt_us(r['auto'])} | {fmt_us(r['sel'])} "
                       f"({r['sel_name']}) | {r['auto'] / r['sel']:.2f} |")
        out.append("")

    out += ["### Broadcast on the ECO-like platform, >= 16 KiB: auto <= 0.55x binomial and <= 0.8x the best selection",
            "", "Subnet bound: the time a subnet's uplink needs to bring in the whole message, size / uplink "
            "bandwidth; no broadcast is faster, so where bound / best selection exceeds 0.8 that target is out of "
            "reach on this platform.", "",
            "| layout | size | auto us | binomial us | auto / binomial | best selection us | auto / best "
            "| subnet bound us | bound / best |",
            "|---|---|---|---|---|---|---|---|---|"]
    hetero = [r for r in rows if r["key"][0] == "hetero" and r["key"][2] == "bcast" and r["key"][3] >= 16384]
    worst_bin = worst_sel = 0
    at = collections.defaultdict(lambda: [0, 0])
    for r in hetero:
        binom = r["times"].get("smpi-binomial_tree")
        if r["auto"] is None or binom is None or r["sel"] is None:
            continue
        qb, qs = r["auto"] / binom, r["auto"] / r["sel"]
        worst_bin, worst_sel = max(worst_bin, qb), max(worst_sel, qs)
        layout = r["key"][1]
        at[layout][0] = max(at[layout][0], qb)
        at[layout][1] = max(at[layout][1], qs)
        bound = subnet_bound("hetero", r["key"][3])
        out.append(f"| {layout} | {size_label(r['key'][3])} | {fmt_us(r['auto'])} | {fmt_us(binom)} | {qb:.2f} | "
                   f"{fmt_us(r['sel'])} ({r['sel_name']}) | {qs:.2f} | {fmt_us(bound)} | {bound / r['sel']:.2f} |")
    out.append("")
    if hetero:
        out.append(f"- worst auto / binomial {worst_bin:.2f}: **{'met' if worst_bin <= 0.55 else 'not met'}**; "
                   f"worst auto / best selection {worst_sel:.2f}: **{'met' if worst_sel <= 0.8 else 'not met'}**")
        for layout, (qb, qs) in sorted(at.items()):
            out.append(f"  - {layout}: worst {qb:.2f} / {qs:.2f}")
    else:
        out.append("- not run in this sweep")
    out.append("")
    return out


def policy_section(rows):
    out = ["## auto against the best shim option (native included): within 10%?", ""]
    bad = [r for r in rows if r["auto"] is not None and r["opt"] is not None and r["auto"] > 1.10 * r["opt"]]
    total = sum(1 for r in rows if r["auto"] is not None and r["opt"] is not None)
    out.append(f"{total - len(bad)} of {total} points within 10%. Points beyond:")
    out.append("")
    if bad:
        out += ["| platform | layout | op | size | auto us | best option | its us | auto / best |",
                "|---|---|---|---|---|---|---|---|"]
        for r in sorted(bad, key=lambda r: r["key"]):
            p, l, o, s = r["key"]
            out.append(f"| {p} | {l} | {o} | {size_label(s)} | {fmt_us(r['auto'])} | {r['opt_name']} | "
                       f"{fmt_us(r['opt'])} | {r['auto'] / r['opt']:.2f} |")
    else:
        out.append("none.")
    out.append("")
    return out


def plot_lines(rows, platform, layout, op, path, title):
    sel = [r for r in rows if r["key"][:3] == (platform, layout, op)]
    if not sel:
        return False
    sizes = [r["key"][3] for r in sel]
    names = sorted({v for r in sel for v in r["times"]})
    fig, ax = plt.subplots(figsize=(8, 5))
    for n in names:
        if n.startswith("smpi-") and n != "smpi-binomial_tree":
            continue
        ys = [r["times"].get(n) for r in sel]
        xs = [s for s, y in zip(sizes, ys) if y is not None]
        ys = [y * 1e6 for y in ys if y is not None]
        style = "-o" if n.startswith("shim-") else "--x"
        ax.plot(xs, ys, style, label=n, linewidth=2.2 if n == "shim-auto" else 1.2)
    xs = [r["key"][3] for r in sel if r["single"] is not None]
    ax.plot(xs, [r["single"] * 1e6 for r in sel if r["single"] is not None], ":", color="gray",
            label="best single SMPI algorithm")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per block" if op == "alltoall" else "message bytes")
    ax.set_ylabel("simulated time per call (us)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_ratio_map(rows, platform, op, path, title):
    sel = [r for r in rows if r["key"][0] == platform and r["key"][2] == op and r["auto"] and r["sel"]]
    layouts = sorted({r["key"][1] for r in sel}, key=lambda l: (len(l), l))
    sizes = sorted({r["key"][3] for r in sel})
    if not layouts:
        return False
    grid = [[None] * len(sizes) for _ in layouts]
    for r in sel:
        grid[layouts.index(r["key"][1])][sizes.index(r["key"][3])] = r["auto"] / r["sel"]
    fig, ax = plt.subplots(figsize=(9, max(3, 0.28 * len(layouts) + 1.5)))
    data = [[v if v is not None else float("nan") for v in row] for row in grid]
    im = ax.imshow(data, cmap="RdYlGn_r", vmin=0, vmax=2, aspect="auto")
    ax.set_xticks(range(len(sizes)), [size_label(s) for s in sizes], rotation=45, fontsize=7)
    ax.set_yticks(range(len(layouts)), layouts, fontsize=7)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v is not None:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, label="auto / best selection")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def write_platforms():
    sys.path.insert(0, HERE)
    import platforms
    text = ["# The simulated platforms", "",
            "Made by `bench/sim/report.py platforms` from `bench/sim/platforms.py`, which builds the SimGrid "
            "platform files. Measured figures are the least disturbed (fastest time, highest rate) of the repeats "
            "in `docs/scale/measurements.json` (`bench/sim/calibrate.py measure`): other jobs share this "
            "machine and only ever add time. Per-message CPU costs follow the measured curves "
            "(SMPI's smpi/os, smpi/ois, smpi/or sections through the measured sizes); the 8-byte values are "
            "listed. On the TCP platforms, messages between ranks of one host cost this machine's "
            "shared-memory curves instead (sim_collectives --node-costs). Inside a node, messages go through a "
            "shared-memory link with the measured one-way time and stream rate. Bandwidth and latency corrections by message size (smpi/bw-factor, "
            "smpi/lat-factor) are off: the figures are end to end.", "", platforms.platform_table()]
    with open(os.path.join(OUT, "platforms.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    print("report: docs/scale/platforms.md")


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "small"
    if name == "platforms":
        write_platforms()
        return
    points, meta, errors = load(name)
    rows = analyse(points)
    figures = []
    for platform, op in sorted({(r["key"][0], r["key"][2]) for r in rows}):
        path = f"{name}-map-{platform}-{op}.png"
        if plot_ratio_map(rows, platform, op, os.path.join(OUT, path),
                          f"{op}, {platform}: shim auto / best SMPI selection (green < 1)"):
            figures.append(path)
    for platform, layout, op in [("ib-onload", "64x16", "alltoall"), ("ib-onload", "128x16", "alltoall"),
                                 ("ib-onload", "32x16", "alltoall"), ("ib-onload", "8x8", "alltoall"),
                                 ("ib-onload", "8x8", "bcast"),
                                 ("ib-onload", "64x16", "bcast"), ("hetero", "64x8", "bcast"),
                                 ("hetero", "128x8", "bcast"), ("hetero", "8x4", "bcast"),
                                 ("ib-offload", "64x16", "alltoall")]:
        path = f"{name}-{platform}-{layout}-{op}.png"
        if plot_lines(rows, platform, layout, op, os.path.join(OUT, path), f"{op}, {platform}, {layout}"):
            figures.append(path)
    md = [f"# Scale model: {name} sweep", "",
          f"Made by `{COMMANDS[name]}` (docs/scale/{name}.csv holds every run). Simulated with SimGrid 3.32 "
          "SMPI on the platforms of docs/scale/platforms.md; shim's algorithms run over SMPI's mpich selection, "
          "as libshim runs over MPICH. Times are simulated and deterministic: the time of one call from a "
          "common start on every rank to the last rank's end.", ""]
    md += targets(rows, meta)
    md += policy_section(rows)
    if errors:
        md += ["## Runs that gave no result", "", "| platform | layout | op | size | variant | error |",
               "|---|---|---|---|---|---|"]
        seen = set()
        # Smallest size first, so "from" names the first size without a result.
        for (p, l, o, s), v, e in sorted(errors, key=lambda err: err[0][3]):
            if (p, l, o, v) in seen:
                continue
            seen.add((p, l, o, v))
            md.append(f"| {p} | {l} | {o} | from {size_label(s)} | {v} | {e.replace('|', '/')[:160]} |")
        md.append("")
    md += ["## Plots", ""] + [f"![{f}]({f})" for f in figures] + [""]
    with open(os.path.join(OUT, f"{name}.md"), "w") as f:
        f.write("\n".join(md))
    print(f"report: docs/scale/{name}.md, {len(figures)} plots")


if __name__ == "__main__":
    main()
