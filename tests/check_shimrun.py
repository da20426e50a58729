#!/usr/bin/env python3
"""shimrun (tools/shimrun.in), as built in the build tree.

    check_shimrun.py SHIMRUN LIBSHIM SHIM_INFO --parsing
        options and settings (every name shim-info lists, and no other), the
        launcher check, and the command it builds (--dry-run): -genv
        LD_PRELOAD libshim.so and -genv per setting right after the mpiexec
        word. Bad input costs exactly one line and no run.
    check_shimrun.py SHIMRUN LIBSHIM SHIM_INFO --run MPIEXEC PROGRAM
        a real 2-rank job of PROGRAM, which is not linked to shim: shim's
        decision lines (SHIM_VERBOSE) show it active in the ranks, the
        program's results are right, and mpiexec itself, seen through a
        wrapper that records its environment, got neither LD_PRELOAD nor a
        SHIM_* setting.
"""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile


class Failure(Exception):
    pass


def shimrun(shimrun_path, arguments, env=None):
    return subprocess.run([shimrun_path] + arguments, capture_output=True, text=True, timeout=240,
                          env=env if env is not None else clean_env())


def clean_env():
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("SHIM_")}


def expect_command(shimrun_path, arguments, expected, env=None):
    result = shimrun(shimrun_path, ["--dry-run"] + arguments, env)
    if result.returncode != 0 or result.stderr or shlex.split(result.stdout) != expected:
        raise Failure(f"shimrun {shlex.join(arguments)}: expected {shlex.join(expected)}, got exit "
                      f"{result.returncode}, stdout {result.stdout!r}, stderr {result.stderr!r}")


def expect_refusal(shimrun_path, arguments, start):
    # --dry-run: a shimrun that fails to refuse must not start a job either.
    result = shimrun(shimrun_path, ["--dry-run"] + arguments)
    lines = result.stderr.splitlines()
    if result.returncode != 2 or result.stdout or len(lines) != 1 or not lines[0].startswith("shimrun: " + start):
        raise Failure(f"shimrun {shlex.join(arguments)}: expected exit 2 and one line starting "
                      f"{'shimrun: ' + start!r}, got exit {result.returncode}, stdout {result.stdout!r}, "
                      f"stderr {result.stderr!r}")


def check_parsing(shimrun_path, libshim, shim_info):
    listing = subprocess.run([shim_info, "--settings"], capture_output=True, text=True, check=True).stdout
    settings = [line.split("\t")[0] for line in listing.splitlines()]
    if not {"SHIM_ENABLE", "SHIM_ALLTOALL", "SHIM_STATS", "SHIM_VERBOSE"} <= set(settings):
        raise Failure(f"shim-info --settings lists {settings}")
    preload = ["-genv", "LD_PRELOAD", libshim]
    expect_command(shimrun_path, ["--", "mpiexec", "-n", "2", "./app", "-x"],
                   ["mpiexec"] + preload + ["-n", "2", "./app", "-x"])
    expect_command(shimrun_path, ["--stats", "--verbose", "SHIM_ALLTOALL=sa", "SHIM_PROFILE=/a b=c", "--",
                                  "/usr/bin/mpirun", "-n", "64", "./app"],
                   ["/usr/bin/mpirun"] + preload + ["-genv", "SHIM_STATS", "1", "-genv", "SHIM_VERBOSE", "1", "-genv",
                                                    "SHIM_ALLTOALL", "sa", "-genv", "SHIM_PROFILE", "/a b=c", "-n",
                                                    "64", "./app"])
    # Every setting shim has, and what the environment preloads already.
    expect_command(shimrun_path, [f"{name}=1" for name in settings] + ["--", "mpiexec.hydra", "./app"],
                   ["mpiexec.hydra", "-genv", "LD_PRELOAD", libshim + " libm.so.6"] +
                   [word for name in settings for word in ("-genv", name, "1")] + ["./app"],
                   env=dict(clean_env(), LD_PRELOAD="libm.so.6"))

    expect_refusal(shimrun_path, ["--stat", "--", "mpiexec", "./app"], "unknown option '--stat'")
    expect_refusal(shimrun_path, ["-n", "2", "--", "mpiexec", "./app"], "unknown option '-n'")
    expect_refusal(shimrun_path, ["SHIM_ALLTOAL=sa", "--", "mpiexec", "./app"], "SHIM_ALLTOAL is not a shim setting")
    expect_refusal(shimrun_path, ["UCX_TLS=tcp", "--", "mpiexec", "./app"], "UCX_TLS is not a shim setting")
    expect_refusal(shimrun_path, ["--stats", "mpiexec", "./app"], "unknown option 'mpiexec'")
    expect_refusal(shimrun_path, ["--stats"], "no -- before the mpiexec command")
    expect_refusal(shimrun_path, ["--stats", "--"], "no command after --")
    expect_refusal(shimrun_path, ["--", "srun", "-n", "2", "./app"], "'srun' is not mpiexec or mpirun")
    expect_refusal(shimrun_path, ["--", "./app"], "'./app' is not mpiexec or mpirun")

    # Alone, away from any libshim.so.
    with tempfile.TemporaryDirectory() as directory:
        lone = shutil.copy(shimrun_path, directory)
        expect_refusal(lone, ["--", "mpiexec", "./app"], "libshim.so not found")


WRAPPER = """#!/bin/bash
# mpiexec as shimrun starts it: records what mpiexec itself got.
env | grep -E '^(LD_PRELOAD|SHIM_[A-Z_]*)=' >"$(dirname "$0")/mpiexec-environment"
exec {mpiexec} "$@"
"""


def check_run(shimrun_path, mpiexec, program):
    with tempfile.TemporaryDirectory() as directory:
        wrapper = pathlib.Path(directory) / "mpiexec"
        wrapper.write_text(WRAPPER.format(mpiexec=shlex.quote(mpiexec)))
        wrapper.chmod(0o755)
        result = shimrun(shimrun_path, ["--verbose", "SHIM_ALLTOALL=sa", "SHIM_NODE_SIZE=1", "--", str(wrapper), "-n",
                                        "2", program])
        output = result.stdout + result.stderr
        seen = (pathlib.Path(directory) / "mpiexec-environment").read_text()
    if result.returncode != 0 or "wrong=0" not in output:
        raise Failure(f"the job failed (exit {result.returncode}):\n{output}")
    decisions = [line for line in output.splitlines() if line.startswith("shim: ") and " -> sa" in line]
    if not decisions:
        raise Failure(f"no SHIM_VERBOSE decision for sa from the ranks:\n{output}")
    if seen:
        raise Failure(f"mpiexec itself got {seen!r}")
    print(output)


def main():
    shimrun_path, libshim, shim_info, mode = sys.argv[1:5]
    # The name users link with, in the build tree.
    libshim = str(pathlib.Path(libshim).parent.resolve() / "libshim.so")
    try:
        if mode == "--parsing":
            check_parsing(shimrun_path, libshim, shim_info)
        else:
            check_run(shimrun_path, *sys.argv[5:7])
    except Failure as failure:
        print(f"check_shimrun: {failure}", file=sys.stderr)
        return 1
    print(f"ok: shimrun {mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
