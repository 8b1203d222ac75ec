#!/usr/bin/env bash
# CUDA references for the CPU side (issue 28, comparison 2): the CUDA originals run once on an
# NVIDIA GPU, so that their ports can be checked later on HIP's CPU runtime (64-lane wavefronts)
# on any machine.
#
# On the GPU machine (device tool), from the repo root, with wheels for what its Python lacks in
# .whl/ and HeCBench's NAME-cuda folders copied into .hec/ with their names in .hec/names.txt
# (see benchmarks/README.md): benchmarks/device_hip_cpu.sh OUT_DIR
# OUT_DIR gets machine.txt; validate.json (`rocmigrate validate kernels`: the originals' recorded
# results, for `validate --hip-compiler hip-cpu --reference`); harness.tgz (`rocmigrate harness
# kernels`' report, specs and CUDA outputs, for `harness --hip-compiler hip-cpu --reference`);
# hecbench_cuda.json (`hip_cpu.py --record-cuda`: what each HeCBench original printed with the
# CPU side's arguments, for `hip_cpu.py --cuda`); and the three logs.
set -u
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
work=${WORK:-/tmp/device-hip-cpu}
rm -rf "$work" && mkdir -p "$work"
source benchmarks/device_env.sh > "$out/machine.txt"; cat "$out/machine.txt"
# kernels/ through validate and harness, beside the HeCBench recording (16 cores: builds overlap)
( timeout 500 bash -c 'rocmigrate validate kernels "$@"' _ -o "$work/validate" --runs 3 --warmup 1 > "$out/validate.log" 2>&1
  cp "$work/validate/validate.json" "$out/" ) &
( timeout 500 bash -c 'rocmigrate harness kernels "$@"' _ -o "$work/harness" --runs 1 --hip-compiler nvcc -j 6 \
    > "$out/harness.log" 2>&1
  cd "$work" && find harness -type f ! -perm -u+x -size -4M | tar czf "$out/harness.tgz" -T - ) &
timeout 480 python3 benchmarks/hip_cpu.py --hecbench .hec --checkout . --workdir "$work/hecbench" \
  --record-cuda "$out/hecbench_cuda.json" --jobs "${JOBS:-8}" --timeout "${TIMEOUT:-20}" \
  --only $(cat .hec/names.txt) > "$out/hecbench.log" 2>&1
echo "hecbench rc=$?"
wait
tail -3 "$out/validate.log" "$out/harness.log"
exit 0
