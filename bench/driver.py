"""What the benchmark drivers (alltoall_layouts.py, acc_hosts.py, bcast_links.py,
mirror_hosts.py) share: running a benchmark on this machine or on an emulated
cluster (tools/vcluster) with a time limit, its CSV, markdown tables, the
CSV files and PNG plots they write, and taking the cluster down whatever
happens."""
import argparse
import csv
import os
import signal
import subprocess
import sys
import textwrap
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
VCLUSTER = os.path.join(REPO, "tools", "vcluster")


class Failure(Exception):
    pass


def run_status(command, env, what, timeout):
    """Runs command in a session of its own, so a timeout stops mpiexec and
    its proxies too; returns (exit status, stdout with stderr merged), or
    raises Failure after the timeout."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except BaseException as error:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        if isinstance(error, subprocess.TimeoutExpired):
            raise Failure(f"{what}: no result after {timeout} s; stopped") from None
        raise
    return process.returncode, output


def run(command, env, what, timeout):
    """run_status, and a failed command raises Failure with the output's tail."""
    status, output = run_status(command, env, what, timeout)
    if status != 0:
        raise Failure(f"{what} failed (exit {status}):\n  $ {' '.join(command)}\n" +
                      "\n".join("  | " + line for line in output.splitlines()[-30:]))
    return output


class Result:
    """A benchmark's --csv output: '# ' header lines and CSV rows."""

    def __init__(self, output):
        lines = output.splitlines()
        self.header = [line[2:] for line in lines if line.startswith("# ")]
        table = [line for line in lines if line and not line.startswith("#") and "," in line]
        self.rows = list(csv.DictReader(table))

    def line(self, prefix):
        return next((h for h in self.header if h.startswith(prefix)), "")

    def where(self, **match):
        return [r for r in self.rows if all(r.get(k) == str(v) for k, v in match.items())]

    def find(self, **match):
        return next(iter(self.where(**match)), None)


def format_size(size):
    size = int(size)
    for shift, unit in ((20, "MiB"), (10, "KiB")):
        if size >= 1 << shift:
            return f"{size >> shift} {unit}" if size % (1 << shift) == 0 else f"{size / (1 << shift):.2f} {unit}"
    return f"{size} B"


def fmt(value, digits=None):
    """3 significant-ish digits, or `digits` decimals; '-' for nothing."""
    if value in (None, ""):
        return "-"
    v = float(value)
    if digits is not None:
        return f"{v:.{digits}f}"
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.0f}"


def table(title, columns, rows):
    """Prints a markdown table."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def write_csv(path, columns, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)
    print(f"wrote {path}")


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    step = max(1, (len(sizes) + 6) // 7)
    ax.xaxis.set_major_locator(FixedLocator(sizes[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_size(x)))


def plot_lines(path, title, panels, columns=3):
    """One panel per (title, ylabel, {label: {size: value}}), sizes on a log
    axis, values on a log axis; native series dashed."""
    rows, columns = (len(panels) + columns - 1) // columns, min(columns, len(panels))
    fig, axes = plt.subplots(rows, columns, figsize=(6.2 * columns, 4.6 * rows), squeeze=False)
    for ax, (panel_title, ylabel, series) in zip(axes.flat, panels):
        sizes = sorted({s for points in series.values() for s in points})
        for k, (label, points) in enumerate(series.items()):
            xs = sorted(points)
            # Markers differ and shrink, so that series that coincide stay visible.
            style = {"color": "black", "linestyle": ":"} if label.startswith("minimum") else {
                "marker": "osd^vx"[k % 6], "markersize": max(3, 8 - k), "fillstyle": "none",
                "linestyle": "--" if label.startswith("native") else "-"}
            ax.plot(xs, [points[x] for x in xs], label=label, **style)
        _size_axis(ax, sizes)
        ax.set_yscale("log")
        ax.set(title=panel_title, xlabel="size (bytes, log scale)", ylabel=ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    _save(fig, path, title)


def plot_bars(path, title, xlabel, panels, logy=False, styles=None):
    """One panel per (title, ylabel, categories, {label: [value per category]}):
    grouped bars; styles: {label: bar() keywords}, native hatched by default."""
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.6), squeeze=False)
    for ax, (panel_title, ylabel, categories, series) in zip(axes[0], panels):
        width = 0.8 / len(series)
        for k, (label, values) in enumerate(series.items()):
            positions = [c + (k - (len(series) - 1) / 2) * width for c in range(len(categories))]
            style = {"hatch": "//" if label.startswith("native") else None, **(styles or {}).get(label, {})}
            ax.bar(positions, values, width, label=label, **style)
        ax.set_xticks(range(len(categories)), categories)
        if logy:
            ax.set_yscale("log")
        ax.set(title=panel_title, xlabel=xlabel, ylabel=ylabel)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8)
    _save(fig, path, title)


def _save(fig, path, title):
    fig.suptitle(textwrap.fill(title, 55 * fig.axes[0].get_gridspec().ncols))  # about 55 characters fit a panel
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")


class Driver:
    """Runs the benchmarks of one driver: on this machine, or on the emulated
    cluster `cluster` (a vcluster spec) that measure() brings up first and
    always takes down, also after a failure, Ctrl-C or SIGTERM."""

    def __init__(self, name, doc, cluster_spec=None, add_arguments=None, cluster_only=False):
        self.name = name
        parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--build", default=os.path.join(REPO, "build"), help="shim's build directory")
        parser.add_argument("--out", help="where CSV files and plots go; default BUILD/bench-results/" + name)
        parser.add_argument("--quick", action="store_true", help="fewer sizes and rounds (a smoke test, not figures)")
        if cluster_spec and not cluster_only:
            parser.add_argument("--no-cluster", action="store_true", help="only the one-machine runs (no root)")
        if add_arguments:
            add_arguments(parser)
        self.args = parser.parse_args()
        self.args.build = os.path.abspath(self.args.build)
        self.out = os.path.abspath(self.args.out or os.path.join(self.args.build, "bench-results", name))
        self.spec = cluster_spec
        self.cluster = os.environ.get("VCLUSTER_NAME", name.replace("_", ""))  # vcluster: a-z0-9, 12 at most
        self.use_cluster = cluster_only or (bool(cluster_spec) and not self.args.no_cluster)
        self.timeout = 900  # a hung run must not keep the cluster up forever

    def env(self, extra=None):
        env = dict(os.environ, VCLUSTER_NAME=self.cluster)
        env.pop("SHIM_NODE_SIZE", None)
        env.pop("VCLUSTER_PRELOAD", None)
        env.update(extra or {})
        return env

    def vcluster(self, *args, env=None, what=None):
        return run([VCLUSTER, *args], env or self.env(), what or f"vcluster {args[0]}", self.timeout)

    def bench(self, program, flags, ranks, title, env=None, cluster=False):
        """Runs bench/<program> --csv; prints its title and header, returns the Result."""
        command = ["mpiexec", "-n", str(ranks), os.path.join(self.args.build, "bench", program), "--csv", *flags]
        if cluster:
            command = [VCLUSTER, "run", "--", *command]
        start = time.monotonic()
        output = run(command, self.env(env), title, self.timeout)
        print(f"\n=== {title}  [{time.monotonic() - start:.0f} s]")
        result = Result(output)
        for line in result.header:
            print(f"  {line}")
        print(end="", flush=True)
        return result

    def path(self, file_name):
        return os.path.join(self.out, file_name)

    def measure(self, programs, local, clustered=None):
        """Checks the programs are built, runs local(), then clustered() on
        the cluster; returns the exit status."""
        if self.use_cluster and os.geteuid() != 0:
            print(f"{self.name}: needs root for the emulated cluster (tools/vcluster)", file=sys.stderr)
            return 77
        for program in programs:
            if not os.path.exists(os.path.join(self.args.build, program)):
                print(f"{self.name}: {self.args.build}/{program} is missing: build shim first", file=sys.stderr)
                return 2
        os.makedirs(self.out, exist_ok=True)
        # SIGTERM (a timeout around the driver) unwinds like Ctrl-C.
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        up = False
        status = 0
        try:
            local()
            if clustered and self.use_cluster:
                print(f"\n{self.name}: bringing up the emulated cluster {self.cluster} ...", flush=True)
                up = True
                print(self.vcluster("up", self.spec).strip(), flush=True)
                clustered()
        except Failure as error:
            print(f"{self.name}: {error}", file=sys.stderr)
            status = 1
        except KeyboardInterrupt:
            print(f"{self.name}: interrupted", file=sys.stderr)
            status = 130
        if up:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            try:
                print(self.vcluster("down").strip(), flush=True)
            except Failure as error:
                print(f"{self.name}: {error}", file=sys.stderr)
                status = status or 1
        return status
