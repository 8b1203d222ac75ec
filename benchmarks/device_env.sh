# Sourced by the device_*.sh scripts on the GPU machine, from the repo root: installs the wheels
# carried in .whl/ (what that machine's Python lacks; see docs/benchmarks.md) into a folder of its
# own, puts them and this checkout on PYTHONPATH, defines `rocmigrate` (exported, for sub-shells)
# and prints the GPU, its driver and nvcc's version.
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/rocmigrate-site .whl/*.whl || exit 2
  export PYTHONPATH=/tmp/rocmigrate-site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
rocmigrate() { python3 -c 'import sys; from migrator.cli import main; sys.argv[0] = "rocmigrate"; main()' "$@"; }
export -f rocmigrate
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
