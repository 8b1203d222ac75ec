#!/usr/bin/env bash
# GPU proof of the optimisation rules: `rocmigrate validate` over every kernels/ program on an
# NVIDIA GPU, the CUDA original beside the naive (--no-optimize) and the optimised conversion,
# built with nvcc through rocmigrate's NVIDIA headers. A second run targets ROCm 5.2 (no native
# half/bf16 atomics: the CAS-loop helpers of rocmigrate_atomics.h) for the atomics program.
#
# On the GPU machine, from the repo root, with wheels for what it lacks in .whl/ (see
# docs/benchmarks.md):   benchmarks/device_validate.sh OUT_DIR
set -u
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
source benchmarks/device_env.sh
rocmigrate validate kernels -o "$out/default" --runs "${RUNS:-5}" --max-slowdown 0.02
rocmigrate validate kernels -o "$out/rocm52" --rocm 5.2 --launch-syntax ggl --runs "${RUNS:-5}" \
  --program atomics --program small_transfers --program gradient_transfer
exit 0
