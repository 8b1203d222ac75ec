#!/usr/bin/env bash
# GPU check of rocmigrate_cg_reduce.h (CGM002's support header) on NVIDIA: its cg::reduce and
# scans, over CUDA's groups exposing only what HIP's have, against CUDA's own, bit for bit
# (benchmarks/cg_reduce_compare.cu says which groups, values and results are expected to match).
#
#   benchmarks/cg_reduce_compare.sh prepare   # here: the header as a conversion writes it (needs rocmigrate)
#   benchmarks/cg_reduce_compare.sh run [R]   # on the GPU machine (needs nvcc), from the repo root;
#                                             # R: rounds per thread (default 64; 262144 threads)
set -u
cd "$(dirname "$0")/.."
work=build/cg_reduce
case "${1:-}" in
  prepare)
    rm -rf "$work" && mkdir -p "$work/cuda"
    printf '#include <cooperative_groups/reduce.h>\n' > "$work/cuda/probe.cu"
    rocmigrate convert "$work/cuda" -o "$work/hip" && test -f "$work/hip/rocmigrate_cg_reduce.h"
    ;;
  run)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    nvcc --version | tail -2
    nvcc -O3 -std=c++17 -arch=sm_90 -I "$work/hip" -o "$work/cg_reduce_compare" \
      benchmarks/cg_reduce_compare.cu || { echo "BUILD FAIL"; exit 1; }
    "$work/cg_reduce_compare" "${2:-64}"
    ;;
  *) echo "usage: $0 prepare|run [R]" >&2; exit 2 ;;
esac
