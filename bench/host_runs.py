"""What the benchmark drivers (acc_hosts.py, mirror_hosts.py, bcast_links.py)
share: running a command with a time limit in a session of its own, so a
timeout stops mpiexec and its proxies too; the CSV result of a benchmark
run; and size labels."""
import csv
import os
import signal
import subprocess
import sys


class Failure(Exception):
    pass


def run(command, env, what, timeout):
    """Runs command; returns its stdout (stderr merged), or raises Failure
    with the output's tail."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise Failure(f"{what}: no result after {timeout} s; stopped") from None
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    if process.returncode != 0:
        raise Failure(f"{what} failed (exit {process.returncode}):\n  $ {' '.join(command)}\n" +
                      "\n".join("  | " + line for line in output.splitlines()[-30:]))
    return output


class Result:
    """A benchmark's --csv output: '# ' header lines and CSV rows."""

    def __init__(self, title, output):
        self.title = title
        lines = output.splitlines()
        self.header = [line[2:] for line in lines if line.startswith("# ")]
        table = [line for line in lines if line and not line.startswith("#") and "," in line]
        self.rows = list(csv.DictReader(table))
        self.columns = table[0].split(",") if table else []
        self.machine = next((h for h in self.header if h.startswith("machine:")), "machine: unknown")

    def show(self):
        print(f"\n=== {self.title}")
        for line in self.header:
            print(f"  {line}")
        if self.rows:
            widths = [max(len(c), *(len(r[c] or "") for r in self.rows)) for c in self.columns]
            print("  " + "  ".join(c.rjust(w) for c, w in zip(self.columns, widths)))
            for r in self.rows:
                print("  " + "  ".join((r[c] or "").rjust(w) for c, w in zip(self.columns, widths)))
        print(end="", flush=True)

    def find(self, **match):
        for r in self.rows:
            if all(r.get(k) == str(v) for k, v in match.items()):
                return r
        return None


def format_size(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size / (1 << 20):.2f} MiB"
    if size >= 1 << 10:
        return f"{size >> 10} KiB" if size % (1 << 10) == 0 else f"{size / (1 << 10):.1f} KiB"
    return f"{size} B"


def preflight(name, build, programs, need_root):
    """None when the driver can run; else the exit status, with one line on
    stderr saying why."""
    if need_root and os.geteuid() != 0:
        print(f"{name}: needs root for the emulated cluster (vcluster); --no-cluster runs the rest", file=sys.stderr)
        return 77
    for program in programs:
        path = os.path.join(build, "bench", program)
        if not os.path.exists(path):
            print(f"{name}: {path} is missing: build shim first (meson compile -C {build})", file=sys.stderr)
            return 2
    return None


def run_measurement(name, measure, take_down=None):
    """Runs measure(); returns the exit status. take_down() runs afterwards
    whatever happened, and a second Ctrl-C or SIGTERM cannot cut it short;
    SIGTERM (a timeout around the driver) unwinds like Ctrl-C."""
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    status = 0
    try:
        measure()
    except Failure as error:
        print(f"{name}: {error}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        status = 130
    finally:
        if take_down is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            try:
                take_down()
            except Failure as error:
                print(f"{name}: {error}", file=sys.stderr)
                status = status or 1
    return status
