#!/usr/bin/env bash
# GPU check of the converter on NVIDIA: each kernels/ program built as CUDA, and converted by
# rocmigrate (default ROCm with <<<>>>, and --rocm 5.2 with hipLaunchKernelGGL and lowered
# warp builtins) built with nvcc through rocmigrate's own NVIDIA headers; each run 3 times.
#
#   benchmarks/device_kernels.sh prepare    # here: convert into build/device (needs rocmigrate)
#   benchmarks/device_kernels.sh run        # on the GPU machine (needs nvcc), from the repo root
set -u
cd "$(dirname "$0")/.."
work=build/device
programs="vector_ops reduction transpose stream_pipeline"
case "${1:-}" in
  prepare)
    rm -rf "$work" && mkdir -p "$work"
    rocmigrate nvidia-headers "$work/nvh"
    rocmigrate convert kernels -o "$work/hip"
    rocmigrate convert kernels -o "$work/hip52" --rocm 5.2 --launch-syntax ggl
    ;;
  run)
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    nvcc --version | tail -2
    for prog in $programs; do
      nvcc -O3 -std=c++17 -arch=sm_90 -o "$work/cuda_$prog" "kernels/$prog.cu" || echo "BUILD FAIL cuda $prog"
      for variant in hip hip52; do
        nvcc -O3 -std=c++17 -arch=sm_90 -I "$work/nvh" -x cu -o "$work/${variant}_$prog" \
          "$work/$variant/$prog.cu" || echo "BUILD FAIL $variant $prog"
      done
    done
    for prog in $programs; do
      for variant in cuda hip hip52; do
        for i in 1 2 3; do
          echo "== $variant $prog run $i"
          timeout 60 "$work/${variant}_$prog"; echo "rc=$?"
        done
      done
    done
    ;;
  *) echo "usage: $0 prepare|run" >&2; exit 2 ;;
esac
