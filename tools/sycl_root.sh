#!/usr/bin/env bash
# Lays out Intel's SYCL runtime and oneMKL's SYCL BLAS from PyPI in DIR
# (include/, lib/) for our libcublas's SYCL route (docs/library-backends.md):
#
#   tools/sycl_root.sh DIR            (then: export ZMLIR_SYCL_ROOT=DIR)
#
# Nothing is installed into the environment: the wheels are unpacked in DIR.
# The mkl wheel's CPU libraries and Unified Runtime's loader stay the
# environment's (.venv/lib, linked into DIR/lib). Unified Runtime 2026.x
# ships no OpenCL adapter; 2025.3.3's (the same UR interface, 0.12.0) is
# taken from its wheel.
set -euo pipefail
dir=${1:?usage: tools/sycl_root.sh DIR}
venv=$(cd "$(dirname "$0")/.." && pwd)/.venv
pip=("$venv/bin/python" -m pip download --no-deps -q -d "$dir/wheels")
mkdir -p "$dir/wheels" "$dir/unpacked" "$dir/include" "$dir/lib"
"${pip[@]}" intel-sycl-rt==2026.2.0 onemkl-sycl-blas==2026.2.0 onemkl-sycl-include==2026.2.0
"${pip[@]}" intel-cmplr-lib-ur==2025.3.3
for wheel in "$dir"/wheels/*.whl; do
  unzip -q -o "$wheel" -d "$dir/unpacked"
done
data() { echo "$dir/unpacked/$1.data/data"; }
sycl=$(data intel_sycl_rt-2026.2.0)
cp -a "$sycl"/include/. "$(data onemkl_sycl_include-2026.2.0)"/include/. "$dir/include/"
cp -a "$sycl"/lib/libsycl.so* "$(data onemkl_sycl_blas-2026.2.0)"/lib/libmkl_sycl_blas.so.6 \
  "$(data intel_cmplr_lib_ur-2025.3.3)"/lib/libur_adapter_opencl.so* "$dir/lib/"
# What the adapter and oneMKL need from the environment ($ORIGIN/../lib).
for lib in "$venv"/lib/libumf.so* "$venv"/lib/libmkl_*.so.3 "$venv"/lib/libtbb*.so* \
  "$venv"/lib/libOpenCL.so.1 "$venv"/lib/lib{svml,irng,imf,intlc}.so*; do
  ln -sf "$lib" "$dir/lib/"
done
rm -rf "$dir/unpacked"
echo "export ZMLIR_SYCL_ROOT=$dir"
