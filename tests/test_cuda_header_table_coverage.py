"""Every public header of the CUDA toolkit (and of the cuRAND wheel) has a row in
rules/api/headers.tsv: mapped, dropped, or '-' (kept and marked by HDR002). A CUDA header
without a row passes through conversion silently and the HIP build fails on it."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import require_path
from migrator import apitables
from rules.api.headers import lookup_header

CUDA_INCLUDE = Path("/usr/local/cuda/include")
# folders whose headers are included by their path below them (<nvtx3/nvToolsExt.h>) and
# folders of the toolkit that are not include paths of their own: cccl/ is put on the include
# path (its cub/, cuda/, thrust/ are covered by their own rows; thrust/ is kept on purpose)
_SUBFOLDERS = ("crt", "nv", "nvtx3", "cooperative_groups", "Openacc", "Openmp")


def _public_headers(include: Path) -> list[str]:
    names = [p.name for p in include.iterdir() if p.is_file()]
    for folder in _SUBFOLDERS:
        names += [p.relative_to(include).as_posix() for p in (include / folder).glob("*")
                  if p.is_file() or folder == "nv"]
    return sorted(names)


def test_every_cuda_toolkit_header_has_a_row():
    require_path(CUDA_INCLUDE / "cuda_runtime.h", "the CUDA toolkit headers")
    headers = apitables.load().headers
    names = _public_headers(CUDA_INCLUDE)
    curand = next(Path(sys.prefix).glob("lib/python*/site-packages/nvidia/*/include/curand.h"),
                  None)  # the nvidia-curand wheel, where installed
    if curand is not None:
        names += sorted(p.name for p in curand.parent.glob("curand*.h"))
    assert len(names) > 150
    missing = [name for name in names if lookup_header(headers, name) is None]
    assert not missing, f"CUDA headers with no row in headers.tsv: {missing}"


def test_headers_no_rocm_has_are_marked_and_kept():
    """A '-' row keeps the include and HDR002 marks it: the header is looked up, not passed."""
    headers = apitables.load().headers
    for name in ("curand_globals.h", "nvToolsExtSync.h", "nvtx3/nvToolsExtMem.h", "cudaTypedefs.h",
                 "cupti_activity.h", "crt/host_runtime.h", "cuda_pipeline.h"):
        entry = lookup_header(headers, name)
        assert entry is not None and entry.hip_header == "-", name
