#!/usr/bin/python3 -B
"""One simulated run: a platform and a layout written to a scratch directory,
smpirun on build/bench/sim/sim_collectives.so with the variant's settings,
and the CSV it prints. Used by sweep, calibrate.py and the smoke test; run
directly, it times one point outside the sweeps:

  bench/sim/simrun.py PLATFORM LAYOUT OP VARIANT SIZES [--set SHIM_NAME=VALUE ...] [--precision P]
  bench/sim/simrun.py hetero 4x1 bcast shim-eco 16384
  bench/sim/simrun.py ib-offload 31x8+1x3 alltoall shim-sa 256 --precision 1e-8

LAYOUT is NODESxPPN, optionally +NODESxPPN for a second group of nodes, and
-rr for round-robin placement. --precision sets SimGrid's surf/precision
(default 1e-9): coarser, the bandwidth solver merges flows that end within
that fraction of each other, which is faster and less exact. The sweeps'
CSVs are all at the default; a coarser run is reported beside them.
"""
import argparse
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass

import platforms

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
THREE_SUBNETS_PROFILE = os.path.join(REPO, "tests", "vcluster", "three_subnets_profile.json")

# shim's own algorithms run over MPICH's selection, as libshim runs over MPICH.
SHIM_UNDERNEATH = "mpich"
SELECTORS = ["mpich", "ompi", "mvapich2", "impi"]
SINGLE = {
    "alltoall": ["bruck", "basic_linear", "pair", "ring", "rdb", "2dmesh", "mvapich2_scatter_dest"],
    "bcast": ["binomial_tree", "flattree_pipeline", "scatter_LR_allgather", "scatter_rdb_allgather",
              "SMP_binomial", "SMP_linear", "NTSL", "ompi_pipeline", "ompi_split_bintree",
              "arrival_pattern_aware"],
}
SHIM = {"alltoall": ["auto", "sa", "rd", "leader", "linear", "node-pairs"], "bcast": ["auto", "eco", "twolevel"]}


@dataclass(frozen=True)
class Variant:
    """kind: shim (name = SHIM_ALLTOALL/SHIM_BCAST value), selector (SMPI's
    coll-selector) or single (one SMPI algorithm for the operation)."""
    kind: str
    name: str

    @property
    def label(self):
        return {"shim": "shim-", "selector": "", "single": "smpi-"}[self.kind] + self.name


def variants(op, kinds=("shim", "selector", "single")):
    out = []
    if "shim" in kinds:
        out += [Variant("shim", n) for n in SHIM[op]]
    if "selector" in kinds:
        out += [Variant("selector", n) for n in SELECTORS]
    if "single" in kinds:
        out += [Variant("single", n) for n in SINGLE[op]]
    return out


def default_program(build):
    return os.path.join(REPO, build, "bench", "sim", "sim_collectives.so")


def profile_for(platform_name, layout, directory):
    """ECO needs the measured picture of the network; on the simulated
    ECO-like platform it is the picture shim-probe would take: one-way
    times from the platform's own figures, subnets as the platform builds
    them. Written once per node count into `directory`; None elsewhere."""
    if platforms.PLATFORMS[platform_name].kind != "hetero":
        return None
    path = os.path.join(directory, f"profile-{platform_name}-{layout.nodes}.json")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(platforms.hetero_profile_json(platform_name, layout.nodes))
    return path


def command_and_env(program, platform_file, host_file, op, variant, sizes, extra_args=(), profile=None,
                    settings=(), precision=None):
    cfg = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/wtime:0",
           "--log=root.thres:warning", "--log=smpi_config.thres:error",
           # The benchmark's own synchronisation (not timed): plain algorithms, because the
           # selections' node-aware ones cost minutes of set-up per run at 1024 ranks.
           "--cfg=smpi/allreduce:rdb", "--cfg=smpi/reduce:binomial"]
    if precision is not None:
        cfg.append(f"--cfg=surf/precision:{precision}")
    if op == "alltoall":
        # Likewise for broadcasts (shim's start-up, the failure count at the end) when they are not measured.
        cfg.append("--cfg=smpi/bcast:binomial_tree")
    env = dict(os.environ)
    for key in [k for k in env if k.startswith("SHIM_")]:
        del env[key]
    if variant.kind == "shim":
        cfg.append(f"--cfg=smpi/coll-selector:{SHIM_UNDERNEATH}")
        env["SHIM_ALLTOALL" if op == "alltoall" else "SHIM_BCAST"] = variant.name
        if profile:
            env["SHIM_PROFILE"] = profile
        env.update(settings)
    else:
        env["SHIM_ENABLE"] = "0"
        cfg.append(f"--cfg=smpi/coll-selector:{SHIM_UNDERNEATH if variant.kind == 'single' else variant.name}")
        if variant.kind == "single":
            cfg.append(f"--cfg=smpi/{op}:{variant.name}")
    command = ["smpirun", "-platform", platform_file, "-hostfile", host_file, *cfg, program,
               "--op", op, "--sizes", ",".join(str(s) for s in sizes), *extra_args]
    return command, env


def parse_rows(stdout):
    rows = []
    for line in stdout.splitlines():
        parts = line.strip().split(",")
        if len(parts) == 5 and parts[0] in ("alltoall", "bcast"):
            rows.append({"op": parts[0], "bytes": int(parts[1]), "seconds": float(parts[2]),
                         "start": float(parts[3]), "expected_inter": int(parts[4])})
    return rows


def run(program, platform_name, layout, op, variant, sizes, extra_args=(), timeout=None, profile=None,
        nice=True, settings=(), precision=None):
    """Returns (rows, error): rows as parse_rows gives them, error a short
    text when the run failed (rows then hold what it printed before)."""
    with tempfile.TemporaryDirectory(prefix="shim-sim-") as tmp:
        platform_file = os.path.join(tmp, "platform.xml")
        host_file = os.path.join(tmp, "hosts")
        with open(platform_file, "w") as f:
            f.write(platforms.platform_xml(platform_name, layout.nodes, layout.max_ppn))
        with open(host_file, "w") as f:
            f.write(platforms.hostfile(platform_name, layout))
        node_costs = platforms.node_costs_spec(platforms.PLATFORMS[platform_name])
        if node_costs:
            extra_args = [*extra_args, "--node-costs", node_costs]
        settings = {**platforms.probed_settings(platform_name), **dict(settings)}
        command, env = command_and_env(program, platform_file, host_file, op, variant, sizes, extra_args, profile,
                                       settings, precision)
        # smpirun copies the program once per rank into TMPDIR (its -tmpdir flag is broken in 3.32).
        env["TMPDIR"] = tmp
        if nice:
            command = ["nice", "-n", "15", *command]
        # Its own session, so that a timeout ends smpirun's simulator too, not
        # only the shell script that started it.
        with subprocess.Popen(command, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                stdout, _ = process.communicate()
                # The sizes finished before the time-out stand.
                return parse_rows(stdout), f"no result after {timeout} s"
        rows = parse_rows(stdout)
        if process.returncode != 0:
            tail = [line for line in (stderr + stdout).splitlines() if line.strip()][-3:]
            return rows, f"exit {process.returncode}: " + " | ".join(tail)[:300]
        return rows, None


def variant_of(label):
    for prefix, kind in (("shim-", "shim"), ("smpi-", "single")):
        if label.startswith(prefix):
            return Variant(kind, label[len(prefix):])
    return Variant("selector", label)


def parse_layout(text):
    shape, _, placement = text.partition("-")
    counts = []
    for group in shape.split("+"):
        nodes, ppn = (int(x) for x in group.split("x"))
        counts += [ppn] * nodes
    return platforms.Layout(tuple(counts), round_robin=placement == "rr")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("platform", choices=sorted(platforms.PLATFORMS))
    parser.add_argument("layout", help="NODESxPPN[+NODESxPPN][-rr]")
    parser.add_argument("op", choices=sorted(SHIM))
    parser.add_argument("variant", help="shim-NAME, smpi-ALGORITHM or a selection (" + ", ".join(SELECTORS) + ")")
    parser.add_argument("sizes", help="bytes, comma-separated")
    parser.add_argument("--set", action="append", default=[], metavar="SHIM_NAME=VALUE",
                        help="a shim setting for shim- variants")
    parser.add_argument("--precision", type=float, help="SimGrid's surf/precision (default: SimGrid's, 1e-9)")
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    layout = parse_layout(args.layout)
    settings = dict(item.split("=", 1) for item in args.set)
    with tempfile.TemporaryDirectory(prefix="shim-simrun-") as tmp:
        rows, error = run(default_program(args.build), args.platform, layout, args.op, variant_of(args.variant),
                          [int(s) for s in args.sizes.split(",")], profile=profile_for(args.platform, layout, tmp),
                          settings=settings, precision=args.precision)
    for r in rows:
        print(f"{args.platform} {layout.label()} {args.op} {args.variant} {r['bytes']} B: {r['seconds'] * 1e6:.3f} us")
    if error:
        raise SystemExit(error)


if __name__ == "__main__":
    main()
