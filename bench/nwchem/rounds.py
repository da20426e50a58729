#!/usr/bin/python3 -B
"""rounds: NWChem's wall time natively and under one or more builds of
libshim, in rotating order round by round, with the energy of every run
checked against the native one.

  bench/nwchem/rounds.py water_trimer_b3lyp.nw --rounds 6 --lib now=build/libshim.so
  bench/nwchem/rounds.py water_trimer_b3lyp.nw --lib before=/tmp/old/build/libshim.so --lib now=build/libshim.so

Needs Debian's nwchem-mpich (README, "A real application"). Each run starts
in an empty scratch directory (NWChem would restart from the files of the
last one). The time is NWChem's own "Total times ... wall".
"""
import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import driver  # noqa: E402

ENERGY = re.compile(r"Total DFT energy =\s+(-?\d+\.\d+)")
WALL = re.compile(r"Total times\s+cpu:\s+[\d.]+s\s+wall:\s+([\d.]+)s")
# Runs differ in the last digits (the order of parallel sums changes).
ENERGY_TOLERANCE = 1e-6


def one_run(input_path, ranks, library, timeout):
    with tempfile.TemporaryDirectory(prefix="shim-nwchem-") as scratch:
        shutil.copy(input_path, scratch)
        preload = ["-genv", "LD_PRELOAD", os.path.abspath(library)] if library else []
        command = ["mpiexec.mpich", *preload, "-n", str(ranks), "nwchem.mpich", os.path.basename(input_path)]
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        output = driver.run(["sh", "-c", f"cd {scratch} && exec \"$@\"", "sh", *command], env,
                            " ".join(command), timeout)
    energy, wall = ENERGY.search(output), WALL.search(output)
    if not energy or not wall:
        raise driver.Failure("no energy or wall time in NWChem's output:\n" + output[-2000:])
    return float(energy.group(1)), float(wall.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="an NWChem input file (bench/nwchem/*.nw)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--lib", action="append", default=[], metavar="LABEL=PATH",
                        help="a libshim.so to preload, under a label (repeatable)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per run")
    args = parser.parse_args()
    if shutil.which("nwchem.mpich") is None:
        sys.exit("rounds: nwchem.mpich is missing (apt-get install nwchem-mpich)")
    cases = [("native", None)] + [tuple(item.split("=", 1)) for item in args.lib]
    walls = {label: [] for label, _ in cases}
    reference = None
    try:
        for round_index in range(args.rounds):
            for k in range(len(cases)):
                label, library = cases[(round_index + k) % len(cases)]
                energy, wall = one_run(args.input, args.ranks, library, args.timeout)
                reference = energy if reference is None else reference
                if abs(energy - reference) > ENERGY_TOLERANCE:
                    raise driver.Failure(f"{label}: energy {energy} against {reference}")
                walls[label].append(wall)
                print(f"round {round_index + 1} {label}: {wall:.1f} s, energy {energy:.9f}", flush=True)
    except driver.Failure as failure:
        sys.exit(f"rounds: {failure}")
    rows = [[label, driver.fmt(statistics.median(times), 2), f"{min(times):.1f}-{max(times):.1f}",
             driver.fmt(statistics.median(times) / statistics.median(walls["native"]), 2)]
            for label, times in walls.items()]
    driver.table(f"NWChem {os.path.basename(args.input)}, {args.ranks} ranks, {args.rounds} rounds",
                 ["case", "median wall (s)", "range (s)", "median / native"], rows)


if __name__ == "__main__":
    main()
