#!/bin/sh
# pack.sh [REPO] — fill REPO/.devrun (git-ignored; default REPO: the repository this file sits
# in) with run.sh and ncu-table from this folder and what run.sh needs on the device machine,
# from REPO/build after `make -j2 check-gpu-bins` (WITH_CUDA=1, CUDA_ARCHS "80 90"): the CUDA check binary, the kvbound command and its two
# libraries, the OpenCL check binary, every mutant fatbin and the correct kernels' fatbin, the
# ptxas report, and the shared libraries these need that a bare CUDA image lacks (GSL, OpenBLAS
# and its Fortran runtime, Lua 5.4, the OpenCL ICD loader, libcudart of the build). glibc,
# libstdc++/libgcc_s and libcuda are NOT carried (the device's own are newer / the driver's).
# Everything but run.sh/ncu-table/MANIFEST goes into payload.tar.gz (gzip: present on every image;
# OpenBLAS alone is 36 MB unpacked), which run.sh unpacks into /tmp. Prints the size packed.
# Rerun after every rebuild (the SHA-256 table of the mutant fatbins is compiled into
# kvb-gpucheck-cuda: the binary and the fatbins must come from one build).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
R=$(cd "${1:-$HERE/../..}" && pwd)
B=$R/build
D=$R/.devrun
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
for f in "$B/kvb-gpucheck-cuda" "$B/kvb-gpucheck" "$B/kvbound" "$B/libkvbound-cli.so" "$B/libkvbound.so" \
         "$B/gpu/kvb_kernels.fatbin" "$B/gpu/gpu_cuda.ptxas.log"; do
  [ -e "$f" ] || { echo "pack.sh: $f is missing (make -j2 check-gpu-bins in $R first)"; exit 1; }
done
[ "$(ls "$B"/gpu/cuda-mutants/*.fatbin | wc -l)" -gt 0 ] || { echo "pack.sh: no mutant fatbins"; exit 1; }
mkdir -p "$D" "$S/bin" "$S/lib" "$S/gpu/cuda-mutants"
rm -rf "$D/bin" "$D/lib" "$D/gpu" "$D/payload.tar.gz"
cp "$HERE/run.sh" "$HERE/ncu-table" "$D/"
cp -p "$B/kvb-gpucheck-cuda" "$B/kvb-gpucheck" "$B/kvbound" "$B/libkvbound-cli.so" "$B/libkvbound.so" "$S/bin/"
cp -p "$B"/gpu/cuda-mutants/*.fatbin "$S/gpu/cuda-mutants/"
cp -p "$B/gpu/kvb_kernels.fatbin" "$B/gpu/gpu_cuda.ptxas.log" "$B/gpu/config" "$S/gpu/"
strip --strip-debug "$S"/bin/* 2>/dev/null || true
# the libraries: everything ldd resolves but the C library family, the C++ runtime and the driver
for b in "$S"/bin/*; do LD_LIBRARY_PATH="$S/bin" ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
  while read -r name path; do
    case $name in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*|libstdc++.so*|libgcc_s.so*|libcuda.so*) continue ;;
      libkvbound*) continue ;;
    esac
    cp -L "$path" "$S/lib/$name"
  done
strip --strip-unneeded "$S"/lib/*.so* 2>/dev/null || true
# scripts/cuda-compile-check's result for this build (ptxas registers/spills, the PTX loads in
# flight): a compile-side check that needs no GPU, run here; run.sh's summary prints it
(cd "$R" && sh scripts/cuda-compile-check build) > "$S/gpu/cuda-compile-check.out" 2>&1 || true
# what was packed, from which commit, with each file's digest (run.sh prints it)
{
  echo "packed $(date -u '+%Y-%m-%d %H:%M UTC') from $R at $(git -C "$R" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$R" diff --quiet HEAD -- src Makefile 2>/dev/null || echo ' (+ uncommitted changes in src/Makefile)')"
  echo "build config: $(cat "$B/gpu/config")"
  echo "nvcc: $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -1)"
  (cd "$S" && find bin lib gpu -type f | sort | xargs sha256sum)
} > "$D/MANIFEST"
(cd "$S" && tar -cf - bin lib gpu | gzip -9 > "$D/payload.tar.gz")
echo "pack.sh: unpacked $(du -sb "$S" | awk '{ printf "%.1f MiB", $1 / 1048576 }'), $D: $(du -sb "$D" | awk '{ printf "%.1f MiB", $1 / 1048576 }')"
