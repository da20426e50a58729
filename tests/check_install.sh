#!/usr/bin/env bash
# `meson install` delivers a usable library: installs into a scratch
# DESTDIR, then builds a program against it the way users do (mpicc plus
# `pkg-config --cflags --libs shim`, so -lshim, not LD_PRELOAD) and runs it:
# the program asks shim for its version and checks the alltoall counters.
set -euo pipefail
# meson test points LD_LIBRARY_PATH at the build tree; the point here is the
# installed copy.
unset LD_LIBRARY_PATH
builddir=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

meson install -C "$builddir" --no-rebuild --destdir "$scratch/root" >/dev/null
pcdir=$(dirname "$(find "$scratch/root" -name shim.pc | head -n 1)")
for file in libshim.so include/shim/shim.h include/shim/version.h; do
  [[ -n $(find "$scratch/root" -path "*/$file" | head -n 1) ]] || { echo "FAIL: $file not installed"; exit 1; }
done

# shimrun, installed, finds the installed library.
shimrun=$(find "$scratch/root" -path '*/bin/shimrun' | head -n 1)
[[ -x $shimrun ]] || { echo "FAIL: shimrun not installed"; exit 1; }
launch=$("$shimrun" --dry-run SHIM_ALLTOALL=sa -- mpiexec -n 2 ./app)
installed_lib=$(dirname "$(find "$scratch/root" -name libshim.so | head -n 1)")/libshim.so
[[ $launch == "mpiexec -genv LD_PRELOAD $installed_lib -genv SHIM_ALLTOALL sa -n 2 ./app" ]] ||
  { echo "FAIL: installed shimrun builds '$launch'"; exit 1; }

cat >"$scratch/consumer.c" <<'C'
#include <shim/shim.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int in[4] = {1, 2, 3, 4}, out[4];
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_SA);
  MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
  shim_counters counters;
  shim_get_alltoall_counters(SHIM_ALLTOALL_SA, &counters);
  int ok = strcmp(shim_version(), SHIM_VERSION_STRING) == 0 && counters.calls == 1 && out[0] == 1;
  printf("%s: shim %s, sa calls %llu\n", ok ? "ok" : "FAIL", shim_version(), (unsigned long long)counters.calls);
  MPI_Finalize();
  return ok ? 0 : 1;
}
C
export PKG_CONFIG_PATH=$pcdir
# The .pc names the real prefix; relocate it into the scratch root.
prefix="$scratch/root$(pkg-config --variable=prefix shim)"
flags=$(pkg-config --define-variable=prefix="$prefix" --cflags --libs shim)
libdir=$(pkg-config --define-variable=prefix="$prefix" --variable=libdir shim)
# A sanitized libshim needs its runtime linked first into the program.
sanitize=()
# (ldd's output is read whole first: with pipefail, `ldd | grep -q` fails
# whenever grep stops reading before ldd has written everything.)
library_deps=$(ldd "$libdir/libshim.so")
[[ $library_deps == *libasan* ]] && sanitize=(-fsanitize=address,undefined)
# shellcheck disable=SC2086
mpicc "${sanitize[@]}" "$scratch/consumer.c" -o "$scratch/consumer" $flags -Wl,-rpath,"$libdir"
consumer_deps=$(ldd "$scratch/consumer")
[[ $consumer_deps == *"$libdir/libshim.so"* ]] || { echo "FAIL: consumer is not linked to the installed libshim"; exit 1; }
mpiexec -n 1 "$scratch/consumer"
