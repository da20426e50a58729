#!/usr/bin/python3 -B
"""acc_hosts: the accumulate paths (window info key shim_accumulate: native,
caller, owner) on one machine and between two emulated hosts.

With 2 ranks on this machine (one node), then one rank on each host of a
vcluster from bench/two_hosts.spec (UCX over TCP, links not rate limited):
acc_latency, acc_server_idle (also with SHIM_SERVER=0) and fock_build; on the
hosts also acc_busy_target. Writes each run's CSV, acc_latency.png (latency
and bandwidth by size and path) and acc_busy_target.png (busy vs idle target)
to --out, and prints markdown tables. Needs root for the cluster (its name:
VCLUSTER_NAME, default acchosts); about 2.5 minutes on a quiet machine.

  bench/acc_hosts.py [--build DIR] [--out DIR] [--no-cluster] [--quick] [--busy S] [--idle S]
"""
import os

import driver
from driver import fmt, format_size

PATHS = ["native", "caller", "owner"]
WHERE = {"local": "one node", "hosts": "2 TCP hosts"}


def main():
    d = driver.Driver("acc_hosts", __doc__, os.path.join(driver.HERE, "two_hosts.spec"), lambda p: (
        p.add_argument("--busy", default="0.01", help="seconds per compute stretch of the busy target"),
        p.add_argument("--idle", default="5", help="seconds of sleep per acc_server_idle phase")))
    quick = d.args.quick
    rounds = ["--rounds", "3"] if quick else []
    results = {}

    def runs(where):
        cluster = where == "hosts"
        title = f"{WHERE[where]}, 2 ranks: "
        results[where, "latency"] = d.bench("acc_latency", [*(["--sizes", "8,64,1K,4K,64K,1M"] if quick else []),
                                                            *rounds], 2, title + "acc_latency", cluster=cluster)
        if cluster:
            results[where, "busy"] = d.bench("acc_busy_target", ["--stretch", d.args.busy, *rounds,
                                                                  *(["--sizes", "8,64K,1M"] if quick else [])],
                                              2, title + "acc_busy_target", cluster=cluster)
        for server in ("1", "0"):
            results[where, "idle" + server] = d.bench("acc_server_idle", ["--seconds", d.args.idle], 2,
                                                      title + f"acc_server_idle, SHIM_SERVER={server}",
                                                      {"SHIM_SERVER": server}, cluster)
        results[where, "fock"] = d.bench("fock_build", ["--paths", ",".join(PATHS), "--builds", "3" if quick else "5"],
                                         2, title + "fock_build", cluster=cluster)

    status = d.measure([f"bench/{p}" for p in ("acc_latency", "acc_busy_target", "acc_server_idle", "fock_build")],
                       lambda: runs("local"), lambda: runs("hosts"))
    for (where, kind), result in results.items():
        driver.write_csv(d.path(f"{where}_{kind}.csv"), list(result.rows[0]), [list(r.values()) for r in result.rows])

    latency = [(where, r) for where in WHERE for r in [results.get((where, "latency"))] if r]
    rows = []
    for where, result in latency:
        for size in sorted({int(r["bytes"]) for r in result.rows}):
            cells = {p: result.find(bytes=size, path=p) for p in PATHS}
            if all(cells.values()) and size in (8, 64, 1024, 4096, 65536, 1 << 20):
                owner = cells["owner"]
                rows.append([WHERE[where], format_size(size), *(fmt(cells[p]["latency_us"]) for p in PATHS),
                             fmt(owner["lat_vs_native"], 2), *(fmt(cells[p]["bandwidth_mbs"]) for p in PATHS),
                             fmt(owner["bw_vs_caller"], 2), fmt(owner["bw_vs_native"], 2)])
    driver.table("Accumulate latency (us per MPI_Accumulate + MPI_Win_flush) and bandwidth (MB/s, 64 per flush)",
                 ["where", "size", "latency native", "caller", "owner", "owner/native", "MB/s native", "caller",
                  "owner", "owner/caller", "owner/native"], rows)
    labels = {p: "native MPI" if p == "native" else f"shim {p}-computes" for p in PATHS}
    panels = [(f"{what}, {WHERE[where]}", unit,
               {labels[p]: {int(r["bytes"]): float(r[column]) for r in result.where(path=p)} for p in PATHS})
              for what, column, unit in (("latency", "latency_us", "µs per accumulate + flush (log)"),
                                         ("bandwidth", "bandwidth_mbs", "MB/s, 64 accumulates per flush (log)"))
              for where, result in latency]
    if panels:
        driver.plot_lines(d.path("acc_latency.png"), "MPI_Accumulate (MPI_SUM of doubles): native MPI vs shim's "
                          "paths", panels, columns=len(latency))

    busy = results.get(("hosts", "busy"))
    if busy:
        driver.table("Origin latency while the target computes without MPI calls, 2 TCP hosts, µs",
                     ["size", "path", "idle", "busy", "busy/idle", "accumulates per busy batch"],
                     [[format_size(r["bytes"]), r["path"], fmt(r["idle_us"]), fmt(r["busy_us"]),
                       fmt(r["busy_over_idle"], 2), r["busy_ops"]] for r in busy.rows])
        sizes = sorted({int(r["bytes"]) for r in busy.rows}, key=int)
        driver.plot_bars(
            d.path("acc_busy_target.png"), f"MPI_Accumulate + flush between 2 TCP hosts, the target idle in MPI or "
            f"computing {d.args.busy} s stretches without MPI calls", "accumulate size",
            [("", "µs per accumulate + flush (log)", [format_size(s) for s in sizes],
              {f"{labels[p]}, target {state}": [float(busy.find(bytes=s, path=p)[f"{state}_us"]) for s in sizes]
               for p in PATHS for state in ("idle", "busy")})], logy=True,
            styles={f"{labels[p]}, target {state}": {"color": f"C{k}", "alpha": 0.45 if state == "idle" else 1}
                    for k, p in enumerate(PATHS) for state in ("idle", "busy")})

    idle_rows = []
    for where in WHERE:
        with_server, without = results.get((where, "idle1")), results.get((where, "idle0"))
        for r in with_server.rows if with_server and without else []:
            base = without.find(phase=r["phase"], rank=r["rank"])
            idle_rows.append([WHERE[where], r["phase"], r["rank"], r["host"],
                              fmt(base["other_threads_exact_pct"] or base["other_threads_pct"], 2),
                              fmt(r["other_threads_exact_pct"] or r["other_threads_pct"], 2), r["threads"]])
    driver.table("CPU of the threads other than the main one while all ranks sleep, percent of one core",
                 ["where", "phase", "rank", "host", "SHIM_SERVER=0", "SHIM_SERVER=1", "threads"], idle_rows)

    driver.table("Fock-build-like kernel (fock_build), ms per build, max over ranks",
                 ["where", "path", "ms per build", "min", "max", "compute", "x/native", "verified"],
                 [[WHERE[where], r["path"], fmt(r["time_ms"]), fmt(r["min_ms"]), fmt(r["max_ms"]),
                   fmt(r["compute_ms"]), r["vs_native"] or "-", r["verified"]]
                  for where in WHERE for r in (results.get((where, "fock")) or driver.Result("")).rows])
    return status


if __name__ == "__main__":
    raise SystemExit(main())
