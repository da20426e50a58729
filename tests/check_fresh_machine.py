#!/usr/bin/env python3
"""The README's two commands, tools/demo and tools/check, install before they
use anything a fresh Debian 12 machine lacks.

Each runs from a scratch copy of tools/ with a PATH that holds only what a
minimal Debian 12 has: the commands of its Essential and Priority: required
packages, plus git. No MPICH, meson, ninja, compiler or python3. apt-get and
dpkg-query are stubs that record their calls: dpkg-query finds no package
installed, and apt-get refuses to install, which stops the script there.
So a script that installs first calls `apt-get update` and `apt-get install`
with the missing packages, and no command is missing on the way; one that
looks for an installed tool first stops earlier without installing, or runs
a command the machine lacks ("command not found"). Nothing is installed.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

BASE_EXTRAS = ["git"]
# apt and dpkg can install: their commands are stubbed or absent, never real.
INSTALLERS = {"apt", "dpkg"}
NEEDED_FIRST = {"mpich", "meson", "ninja-build", "g++", "python3"}

DPKG_QUERY_STUB = """#!/bin/bash
echo "dpkg-query $*" >>"$CALL_LOG"
echo "dpkg-query: no packages found matching ${*: -1}" >&2
exit 1
"""
APT_GET_STUB = """#!/bin/bash
echo "apt-get $*" >>"$CALL_LOG"
[[ $1 == update ]] && exit 0
echo "apt-get (stub): not installing" >&2
exit 100
"""


def base_packages():
    listing = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n"], capture_output=True,
                             text=True, check=True).stdout
    packages = [fields[0] for fields in (line.split() for line in listing.splitlines())
                if len(fields) == 3 and (fields[1] == "yes" or fields[2] == "required")]
    return sorted(set(packages + BASE_EXTRAS) - INSTALLERS)


def make_base_path(bin_dir):
    """bin_dir gets the base system's commands as symlinks, and the stubs."""
    listing = subprocess.run(["dpkg-query", "-L"] + base_packages(), capture_output=True, text=True).stdout
    base_files = {pathlib.Path(line).resolve() for line in listing.splitlines() if line.startswith("/")}
    # Commands by the names they are called by, alternatives (awk, which)
    # included; /bin and /sbin are /usr's since Debian 12 merged them.
    for directory in (pathlib.Path("/usr/bin"), pathlib.Path("/usr/sbin")):
        for command in directory.iterdir():
            target = command.resolve()
            if target in base_files and target.is_file() and not (bin_dir / command.name).exists():
                (bin_dir / command.name).symlink_to(target)
    for name, text in (("dpkg-query", DPKG_QUERY_STUB), ("apt-get", APT_GET_STUB)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    missing = [name for name in ("mpiexec", "meson", "ninja", "g++", "python3") if (bin_dir / name).exists()]
    if missing:
        sys.exit(f"check_fresh_machine: the base-system PATH should lack {missing}")


def check(script, scratch, bin_dir):
    log = scratch / "calls"
    log.write_text("")
    env = {"PATH": str(bin_dir), "HOME": str(scratch), "CALL_LOG": str(log)}
    run = subprocess.run([str(scratch / "tools" / script)], env=env, capture_output=True, text=True, timeout=60)
    calls = log.read_text().splitlines()
    output = f"exit {run.returncode}\n--- stdout:\n{run.stdout}--- stderr:\n{run.stderr}--- calls:\n" + "\n".join(calls)
    if os.geteuid() == 0:
        installs = [call.split()[2:] for call in calls if call.startswith("apt-get install")]
        apt_calls = [call.split()[1] for call in calls if call.startswith("apt-get")]
        if apt_calls != ["update", "install"] or not installs or "command not found" in run.stderr:
            return f"tools/{script} did not install first (expected apt-get update, then install, to be " \
                   f"reached, and no command missing on the way):\n{output}"
        if not NEEDED_FIRST <= set(installs[0]):
            return f"tools/{script} installed {installs[0]}, not all of {sorted(NEEDED_FIRST)}:\n{output}"
    else:
        # Not root: setup names the missing packages and stops before apt-get.
        if run.returncode != 1 or "setup: missing Debian packages:" not in run.stderr or \
                any(call.startswith("apt-get") for call in calls):
            return f"tools/{script} did not reach setup's package check first:\n{output}"
    print(f"ok: tools/{script} reaches the installer first\n{output}\n")
    return None


def main():
    source = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    with tempfile.TemporaryDirectory() as directory:
        scratch = pathlib.Path(directory)
        shutil.copytree(source / "tools", scratch / "tools")
        bin_dir = scratch / "bin"
        bin_dir.mkdir()
        make_base_path(bin_dir)
        failures = [failure for failure in (check(script, scratch, bin_dir) for script in ("demo", "check"))
                    if failure]
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
