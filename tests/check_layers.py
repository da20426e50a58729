#!/usr/bin/env python3
"""Fails on any #include that points up or sideways between shim's folders.

The library is layered: the interposers (shim/) on top, the wings
(collectives/, rma/, mirror/) below them, topology/ below the wings, and
common/ at the bottom. A folder may include its own headers and those of the
folders below it, never a folder above or beside it, so no two folders form
a cycle. Tools, tests and benchmarks sit above everything and are not checked.
"""
import pathlib
import re
import sys

BELOW = {
    "common": set(),
    "topology": {"common"},
    "collectives": {"topology", "common"},
    "rma": {"topology", "common"},
    "mirror": {"topology", "common"},
    "shim": {"collectives", "rma", "mirror", "topology", "common"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def violations(root):
    for folder, allowed in BELOW.items():
        for path in sorted((root / folder).glob("*.[ch]pp")):
            for target in INCLUDE.findall(path.read_text()):
                reached = target.split("/")[0]
                if "/" not in target or reached == folder:
                    continue
                if reached not in allowed:
                    yield f"{path.relative_to(root)} includes \"{target}\": {folder}/ may include only " + (
                        ", ".join(sorted(f"{name}/" for name in allowed)) or "itself")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    found = list(violations(root))
    for line in found:
        print(line)
    checked = sum(len(list((root / folder).glob("*.[ch]pp"))) for folder in BELOW)
    print(f"{checked} files in {len(BELOW)} folders checked, {len(found)} includes point up or sideways")
    return 1 if found or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
