"""What tools/opencoarrays-tests and tools/bagel-examples share: a third
party's programs run natively and under shim's configurations (LD_PRELOAD
for the ranks only, as shimrun does), the operations shim ran summed from
each run's SHIM_STATS report, and the table both print."""
import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def eco_across_subnets(node_size):
    """ECO over 3 subnets of virtual nodes of `node_size` processes (virtual
    node i in subnet i % 3; tests/data/vnodes_3_subnets.json names 8 of
    them), every broadcast cut into segments from 1 KiB."""
    return {"SHIM_NODE_SIZE": str(node_size), "SHIM_BCAST": "eco", "SHIM_BCAST_SEGMENT": "1K",
            "SHIM_PROFILE": str(REPO / "tests" / "data" / "vnodes_3_subnets.json")}


# Virtual nodes of 1-2 processes give every run a remote part.
CONFIGS = {
    "native": None,
    "owner-1": {"SHIM_NODE_SIZE": "1", "SHIM_ACCUMULATE": "owner"},
    "auto-2": {"SHIM_NODE_SIZE": "2"},
    "caller-1": {"SHIM_NODE_SIZE": "1", "SHIM_ACCUMULATE": "caller"},
    "clustered-1": {"SHIM_NODE_SIZE": "1", "SHIM_ACCUMULATE": "owner", "SHIM_SERVER_CLUSTER": "2",
                    "SHIM_SERVER_CREDITS": "1"},
    # Every broadcast through shim's trees between nodes, in segments from 1
    # KiB: two-level, and ECO across 3 subnets.
    "bcast-1": {"SHIM_NODE_SIZE": "1", "SHIM_BCAST": "twolevel", "SHIM_BCAST_SEGMENT": "1K"},
    "eco-1": eco_across_subnets(1),
}
# "shim: total   <path>   <ops>   <bytes>" in SHIM_STATS' accumulate table.
ACCUMULATE_TOTAL = re.compile(r"^shim: total\s+(\S+)\s+(\d+)\s+\d+\s*$", re.M)
BCAST_OPS = re.compile(r"^shim: stats: bcast algo=(\S+) .* ops=(\d+)", re.M)


def install(tool, package, marker):
    """Installs the Debian package that provides `marker`, as root, when it is missing."""
    if marker.exists():
        return
    if os.geteuid() != 0:
        sys.exit(f"{tool}: {marker} is missing: apt-get install {package} (as root)")
    for command in (["apt-get", "install", "-y", "-q", package], ["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", package]):
        if subprocess.run(command, stdout=subprocess.DEVNULL).returncode == 0 and marker.exists():
            return
    sys.exit(f"{tool}: could not install {package}")


def shim_library(tool, build):
    if shutil.which("mpiexec.mpich") is None:
        sys.exit(f"{tool}: mpiexec.mpich is missing (tools/setup installs MPICH)")
    library = (REPO / build / "libshim.so").resolve()
    if not library.exists():
        sys.exit(f"{tool}: {library} is missing: build shim first (tools/setup)")
    return library


def add_arguments(parser, np, timeout, runs):
    """The options both scripts take; `runs` names what one run is ("test", "example")."""
    parser.add_argument("--build", default="build", help="shim's build directory")
    parser.add_argument("--np", type=int, default=np, help=f"processes per {runs}")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated configurations")
    parser.add_argument("--timeout", type=int, default=timeout, help="seconds per run")
    parser.add_argument("--list", action="store_true", help=f"print the configurations and {runs}s, run nothing")


def print_list(configs, names):
    for name, settings in configs.items():
        print(name, " ".join(f"{k}={v}" for k, v in (settings or {}).items()) or "native")
    print(" ".join(names))


def chosen_configs(names):
    """The configurations named (comma-separated), native always among them, first."""
    configs = {name: CONFIGS[name] for name in names.split(",")}
    return configs if "native" in configs else {"native": None, **configs}


def run(program, np, library, settings, timeout, cwd=None, every_run=None):
    """(exit status, or None after `timeout` seconds; output) of `program` (a list) on `np` processes, natively
    when `settings` is None, else under shim with those settings and SHIM_STATS on; `every_run`: variables
    given to the processes either way."""
    command = ["mpiexec.mpich"]
    for name, value in (every_run or {}).items():
        command += ["-genv", name, value]
    if settings is not None:
        command += ["-genv", "LD_PRELOAD", str(library), "-genv", "SHIM_STATS", "1"]
        for name, value in settings.items():
            command += ["-genv", name, value]
    command += ["-n", str(np), *program]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIM_") and k != "LD_PRELOAD"}
    try:
        done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return None, (expired.stdout or b"").decode(errors="replace") + f"\n(no result after {timeout} s)"
    return done.returncode, done.stdout.decode(errors="replace")


class Outcomes:
    """Which runs passed per configuration, and what shim ran in them."""

    def __init__(self, configs):
        self.configs = configs
        self.passed = collections.defaultdict(list)
        self.failed = collections.defaultdict(list)
        self.work = collections.Counter()

    def passed_natively(self, test):
        return test in self.passed["native"]

    def add(self, test, name, ok, output, why=""):
        (self.passed if ok else self.failed)[name].append(test)
        for path, ops in ACCUMULATE_TOTAL.findall(output):
            self.work[(name, f"accumulate {path}")] += int(ops)
        for algorithm, ops in BCAST_OPS.findall(output):
            self.work[(name, f"bcast {algorithm}")] += int(ops)
        if not ok and not why:
            why = " ".join([line for line in output.splitlines() if line.strip()][-1:])
        print(f"{test} {name}: {'passed' if ok else 'FAILED ' + why[:160]}", flush=True)

    def report(self):
        """Prints the table; exits 1 when a run failed under shim where it passed natively."""
        print("| configuration | passed | failed | failed under shim only | operations shim ran (SHIM_STATS, summed) |")
        print("|---|---|---|---|---|")
        regressions = []
        for name in self.configs:
            shim_only = [t for t in self.failed[name] if self.passed_natively(t)] if name != "native" else []
            regressions += shim_only
            ran = ", ".join(f"{what} {ops:,}" for (config, what), ops in sorted(self.work.items()) if config == name)
            print(f"| `{name}` | {len(self.passed[name])} | {len(self.failed[name])} | {', '.join(shim_only) or '-'} | "
                  f"{ran or '-'} |")
        if regressions:
            sys.exit(1)
