#!/usr/bin/python3 -B
"""mirror_hosts: the mirrored-window benchmarks on one machine and on an
emulated cluster.

With 2 ranks on this machine as 2 virtual nodes (SHIM_NODE_SIZE=1):
mirror_access (one origin, both origins, and the user buffer 16 bytes past a
page), mirror_merge, mirror_matmul, mirror_dft. Then one rank per host of a
vcluster from bench/four_hosts.spec (4 hosts, one subnet, 1 Gbit/s, UCX over
TCP; name VCLUSTER_NAME, default mirrorhosts): mirror_access on 2 hosts,
mirror_merge, mirror_matmul and mirror_dft on 2, 3 and 4 hosts. Writes each
run's CSV and mirror_access.png (mirrored get/put against MPI_Get/MPI_Put by
size) to --out and prints markdown tables. Needs root for the cluster; about
8 minutes on a quiet machine.

  bench/mirror_hosts.py [--build DIR] [--out DIR] [--no-cluster] [--quick]
"""
import os

import driver
from driver import fmt, format_size

LOCAL = "one machine, 2 virtual nodes"
METHODS = ["MPI_Get+flush", "mirror_get", "MPI_Put+flush", "mirror_put"]


def main():
    d = driver.Driver("mirror_hosts", __doc__, os.path.join(driver.HERE, "four_hosts.spec"))
    rounds = ["--rounds", "3"] if d.args.quick else []
    results = {}
    virtual = {"SHIM_NODE_SIZE": "1"}

    def local():
        for what, flags in (("one origin", ["--origins", "one"]), ("both origins", ["--origins", "all"]),
                            ("one origin, buffer 16 B past a page", ["--origins", "one", "--min", "4K",
                                                                     "--buffer-offset", "16"])):
            results[LOCAL, "access " + what] = d.bench("mirror_access", flags + rounds, 2,
                                                       f"{LOCAL}: mirror_access, {what}", virtual)
        for program in ("merge", "matmul", "dft"):
            results[LOCAL, program] = d.bench("mirror_" + program, rounds, 2, f"{LOCAL}: mirror_{program}", virtual)

    def clustered():
        hosts2 = "2 emulated TCP hosts"
        results[hosts2, "access one origin"] = d.bench("mirror_access", ["--origins", "one", "--rounds", "7"], 2,
                                                       f"{hosts2}: mirror_access, one origin", cluster=True)
        results[hosts2, "access both origins"] = d.bench("mirror_access", ["--origins", "all", "--max", "64K",
                                                                           "--rounds", "5"], 2,
                                                         f"{hosts2}: mirror_access, both origins", cluster=True)
        for hosts in (2, 3, 4):
            where = f"{hosts} emulated hosts"
            for program in ("merge", "matmul", "dft"):
                count = "3" if d.args.quick or hosts > 2 or program == "dft" else "5"
                results[where, program] = d.bench("mirror_" + program, ["--rounds", count], hosts,
                                                  f"{where}: mirror_{program}", cluster=True)

    status = d.measure([f"bench/mirror_{p}" for p in ("access", "merge", "matmul", "dft")], local, clustered)
    for (where, key), result in results.items():
        driver.write_csv(d.path(f"{where.split(',')[0]} {key}.csv".replace(" ", "_").replace(",", "")),
                         list(result.rows[0]), [list(r.values()) for r in result.rows])

    access = [(where, key, r) for (where, key), r in results.items() if key.startswith("access ")]
    driver.table("Get/put of a range a remote owner holds, µs per operation", ["where", "size", *METHODS], [
        [f"{where}, {key[7:]}", format_size(size), *(fmt(r.find(bytes=size, method=m)["latency_us"]) for m in METHODS)]
        for where, key, r in access for size in (8, 4096, 1 << 20) if r.find(bytes=size)])
    driver.table("Merge, µs per merge (bytes per merging process: full >= / sparse in / patch >=)",
                 ["where", "size", "full", "sparse", "patch 10%", "bytes per merging process"], [
                     [where, format_size(size), *(fmt(c["time_us"]) for c in cells),
                      " / ".join(format_size(float(c["bytes_per_process"])) for c in cells)]
                     for (where, key), r in results.items() if key == "merge" for size in (64 << 10, 1 << 20, 16 << 20)
                     for cells in [[r.find(bytes=size, mode=m) for m in ("full", "sparse", "patch")]] if all(cells)])
    kernels = []
    for (where, key), r in results.items():
        if key == "dft":
            mirrored, distributed = (float(r.find(variant=v)["total_ms"]) for v in ("mirrored", "distributed"))
            kernels.append([where, "DFT pattern", fmt(mirrored), fmt(distributed), fmt(distributed / mirrored, 2)])
        if key == "matmul":
            full, sparse, distributed = (float(r.find(variant=v)["total_ms"])
                                         for v in ("mirror+merge", "mirror+sparse", "distributed"))
            kernels.append([where, f"C = A.B, n = {r.rows[0]['n']} (full / sparse merge)",
                            f"{fmt(full)} / {fmt(sparse)}", fmt(distributed),
                            f"{distributed / full:.2f} / {distributed / sparse:.2f}"])
    driver.table("Kernels, ms: mirrored against distributed",
                 ["where", "kernel", "mirrored", "distributed", "distributed/mirrored"], kernels)

    def label(method, where):
        op = "Get" if "get" in method.lower() else "Put"
        return f"native MPI_{op} + flush, {where}" if method.startswith("MPI") else f"shim {method}, {where}"
    one = [(where, r) for where, key, r in access if key == "access one origin"]
    if one:
        driver.plot_lines(d.path("mirror_access.png"), "Get/put of a remote owner's doubles, one origin: "
                          "native MPI_Get/MPI_Put + flush vs shim's mirrored window", [
                              (op, "µs per operation (log)",
                               {label(m, where): {int(x["bytes"]): float(x["latency_us"]) for x in r.where(method=m)}
                                for where, r in one for m in METHODS if op in m.lower()})
                              for op in ("get", "put")])
    return status


if __name__ == "__main__":
    raise SystemExit(main())
