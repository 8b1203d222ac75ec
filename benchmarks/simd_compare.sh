#!/usr/bin/env bash
# GPU check of rocmigrate_simd.h (SIM001's support header) on NVIDIA: each of the 82 SIMD video
# intrinsics it defines is compared with CUDA's own, bit for bit, on 2 x 2^32 input pairs
# (benchmarks/simd_compare.cu says which).
#
#   benchmarks/simd_compare.sh prepare   # here: the header as a conversion writes it (needs rocmigrate)
#   benchmarks/simd_compare.sh run [N]   # on the GPU machine (needs nvcc), from the repo root;
#                                        # N: log2 of the pairs per phase (default 32)
set -u
cd "$(dirname "$0")/.."
work=build/simd
case "${1:-}" in
  prepare)
    rm -rf "$work" && mkdir -p "$work/cuda"
    printf '__global__ void k(unsigned int* p) { *p = __vadd2(*p, 1u); }\n' > "$work/cuda/probe.cu"
    rocmigrate convert "$work/cuda" -o "$work/hip" && test -f "$work/hip/rocmigrate_simd.h"
    ;;
  run)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    nvcc --version | tail -2
    nvcc -O3 -std=c++17 -arch=sm_90 -I "$work/hip" -o "$work/simd_compare" \
      benchmarks/simd_compare.cu || { echo "BUILD FAIL"; exit 1; }
    "$work/simd_compare" "${2:-32}"
    ;;
  *) echo "usage: $0 prepare|run [N]" >&2; exit 2 ;;
esac
