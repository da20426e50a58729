#!/bin/sh
# Every C and C++ file of the repository is as .clang-format lays it out
# (Debian 12's clang-format 14), so style does not drift.
set -e
cd "$1"
git ls-files '*.c' '*.cpp' '*.h' '*.hpp' | xargs clang-format --dry-run -Werror
