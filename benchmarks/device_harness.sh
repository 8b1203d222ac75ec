#!/usr/bin/env bash
# GPU proof of the generated kernel harnesses (issue 15): `rocmigrate harness` over kernels/ and
# over HeCBench programs on an NVIDIA GPU, each kernel's CUDA original beside its converted port
# (built with nvcc through rocmigrate's NVIDIA headers), outputs compared and timed.
#
# On the GPU machine (device tool), from the repo root, with wheels for what it lacks in .whl/
# and the HeCBench programs to try copied into .hec/ (NAME-cuda folders, see docs/benchmarks.md):
#     benchmarks/device_harness.sh OUT_DIR [PROGRAM...]
# KERNELS=0 leaves kernels/ out; HEC=0 (and no PROGRAM) leaves HeCBench out; RUNS (default 10).
# Without PROGRAMs every .hec/*-cuda folder is tried: built PARALLEL (default 8) at a time, each
# for at most PROGRAM_TIMEOUT seconds (default 240), none started after DEADLINE seconds (default
# 300); then run one program at a time (timings must not share the GPU), none started after
# RUN_DEADLINE seconds (default 540). OUT_DIR gets machine.txt, summary.txt (a line per
# program), harness.tar.gz (every harness.json and harness.md, and the specs) and kernels.json /
# kernels.md for kernels/.
set -u
out=${1:?usage: $0 OUT_DIR [PROGRAM...]}
shift
mkdir -p "$out"
work=${WORK:-/tmp/device-harness}
rm -rf "$work" && mkdir -p "$work"
source benchmarks/device_env.sh > "$out/machine.txt"; cat "$out/machine.txt"
runs=${RUNS:-10}
start=$SECONDS
: > "$out/summary.txt"
if [ "${KERNELS:-1}" != 0 ]; then
  rocmigrate harness kernels -o "$work/kernels" --runs "$runs" --hip-compiler nvcc -j 16 \
    > "$work/kernels.log" 2>&1
  echo "kernels rc=$? $(tail -1 "$work/kernels.log")" | tee -a "$out/summary.txt"
  cp "$work/kernels/harness.json" "$out/kernels.json" 2>/dev/null
  cp "$work/kernels/harness.md" "$out/kernels.md" 2>/dev/null
fi

programs=("$@")
if [ ${#programs[@]} -eq 0 ] && [ "${HEC:-1}" != 0 ]; then
  for dir in .hec/*-cuda; do programs+=("$(basename "$dir" -cuda)"); done
fi
build() {  # one HeCBench program's specs and harnesses, built (in parallel with others)
  local name=$1
  if [ $((SECONDS - START)) -gt "$DEADLINE" ]; then echo "$name not built (deadline)"; return; fi
  timeout "$PROGRAM_TIMEOUT" bash -c "rocmigrate harness .hec/$name-cuda -o $WORK/hec/$name \
    --build-only --hip-compiler nvcc -j 2" > "$WORK/logs/$name.build.log" 2>&1
  echo "$name build rc=$? $(tail -1 "$WORK/logs/$name.build.log")"
}
export -f build
mkdir -p "$work/hec" "$work/logs"
export START=$start DEADLINE=${DEADLINE:-300} PROGRAM_TIMEOUT=${PROGRAM_TIMEOUT:-240} WORK=$work
printf '%s\n' "${programs[@]}" | xargs -P "${PARALLEL:-8}" -I{} bash -c 'build {}' \
  | tee -a "$out/summary.txt"
# runs one program at a time: timings must not share the GPU
for name in "${programs[@]}"; do
  [ -d "$work/hec/$name" ] || continue
  if [ $((SECONDS - start)) -gt "${RUN_DEADLINE:-540}" ]; then
    echo "$name not run (deadline)" | tee -a "$out/summary.txt"; continue
  fi
  timeout 120 python3 -m migrator.harness "$work/hec/$name" --runs "$runs" \
    > "$work/logs/$name.run.log" 2>&1
  echo "$name run rc=$? $(tail -1 "$work/logs/$name.run.log")" | tee -a "$out/summary.txt"
  # a line per harness into hec.jsonl as soon as it is judged (the call may be cut short)
  python3 - "$work/hec/$name/harness.json" "$name" >> "$out/hec.jsonl" <<'PY'
import json, sys
try:
    document = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
for h in document.get("harnesses", []):
    print(json.dumps({"program": sys.argv[2], "spec": h.get("spec"), "verdict": h.get("verdict"),
                      "ratio": h.get("ratio"), "timings": h.get("timings"),
                      "timing": h.get("timing"), "problems": h.get("problems"),
                      "buffers": [{k: b.get(k) for k in ("name", "type", "original_count",
                                                         "equal", "mismatches", "max_ulp",
                                                         "max_relative")}
                                  for b in h.get("buffers", [])]}))
PY
done
(cd "$work" && tar -czf "$out/harness.tar.gz" --exclude='build' --exclude='hip-src' \
  hec logs kernels/*.toml kernels/*/*.toml 2>/dev/null)
exit 0
