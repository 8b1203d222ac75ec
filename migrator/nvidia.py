"""Headers that build rocmigrate's HIP output with plain nvcc (HIP names mapped back to CUDA).

Generated from the API tables, so they cover every name the converter emits. The tree written by
``write_nvidia_headers`` goes on nvcc's include path (``-I DIR``) in place of a HIP install:
``hip/hip_runtime.h`` and the other HIP headers the converter emits include the matching CUDA
header and ``hip/rocmigrate_nvidia.h``.
"""

from __future__ import annotations

from pathlib import Path

from . import __version__
from .apitables import ApiTables
from .fsutil import atomic_write

SHIM = "hip/rocmigrate_nvidia.h"
# Libraries that ship outside the CUDA toolkit (values of the header table's library column):
# their wrappers are written only where their CUDA header is found, so that a feature test such
# as ``#if __has_include(<rccl/rccl.h>)`` stays true exactly when the library is there.
OPTIONAL_LIBRARIES = frozenset({"nccl", "cudnn"})
# HIP headers whose library names CUDA's namespace otherwise (rocWMMA's rocwmma:: is
# nvcuda::wmma, rules/portability/wmma.py): their wrapper aliases CUDA's under HIP's name
_NAMESPACE_ALIASES = {"rocwmma/rocwmma.hpp": ("rocwmma", "nvcuda::wmma")}
# macros the template defines by hand (they take arguments or change them)
_HAND_WRITTEN = {"hipHostMalloc", "hipHostMallocDefault", "hipHostMallocPortable",
                 "hipHostMallocMapped", "hipHostMallocWriteCombined"}


# libraries that name their types after themselves on both sides (cublasX_t / hipblasX_t)
_NAMED_LIBRARIES = ("blas", "sparse", "fft", "rand", "solver")


def _foreign_library(hip: str, cuda: str) -> bool:
    """Whether ``cuda`` is spelled as one library's name (cublasDataType_t) while ``hip`` is
    not spelled as that library's (hipDataType): such a CUDA name is declared by that library's
    header only, which code using the HIP name through another library never includes."""
    hip, cuda = hip.lstrip("_").lower(), cuda.lstrip("_").lower()
    return any(cuda.startswith("cu" + word) and not hip.startswith("hip" + word)
               for word in _NAMED_LIBRARIES)


def reverse_names(tables: ApiTables) -> list[tuple[str, str]]:
    """(HIP name, CUDA name) for every renamed API; where several CUDA names share a HIP name,
    one spelled after the HIP name's own library or after none wins (cudaDataType, which
    library_types.h declares for every library, not cuBLAS's cublasDataType_t), then a name of
    the runtime, then a ``_t`` name for a ``_t`` HIP name."""
    chosen: dict[str, tuple[tuple, str]] = {}
    for entry in tables.names.values():
        if entry.status != "supported" or not entry.hip or entry.hip == entry.cuda:
            continue
        if not entry.hip.isidentifier() or entry.hip in _HAND_WRITTEN:
            continue
        if "hip" not in entry.hip.lower():
            continue  # a plain C type the tables substitute (cusolver_int_t -> int): never a macro
        rank = (_foreign_library(entry.hip, entry.cuda),
                entry.library not in ("runtime", "device", "complex"),
                not entry.cuda.endswith("_t") and entry.hip.endswith("_t"), entry.cuda)
        previous = chosen.get(entry.hip)
        if previous is None or rank < previous[0]:
            chosen[entry.hip] = (rank, entry.cuda)
    return sorted((hip, cuda) for hip, (_, cuda) in chosen.items())


def lowered_types(tables: ApiTables) -> list[tuple[str, str]]:
    """(HIP type, CUDA type) for each type the lowerings replace (``hip_bfloat16`` ->
    ``__nv_bfloat16``): the first CUDA name the table lowers to a HIP type stands for it."""
    chosen: dict[str, str] = {}
    for low in tables.lowerings.values():
        if low.kind == "name" and low.replacement.isidentifier():
            chosen.setdefault(low.replacement, low.cuda)
    return sorted(chosen.items())


def header_search_path(extra: tuple[Path, ...] = (), nvcc: str | None = None) -> list[Path]:
    """Where an optional library's CUDA header is looked for: ``extra`` (the -I folders the build
    will use), CPATH / CPLUS_INCLUDE_PATH, the CUDA toolkit's include folder (``$CUDA_HOME``,
    ``$CUDA_PATH``, and the toolkit of ``nvcc``, as ``migrator.toolchain`` found it), and the
    include folders of NVIDIA's Python packages (nvidia-nccl-cu13 and the like)."""
    import os

    folders = list(extra)
    for variable in ("CPATH", "CPLUS_INCLUDE_PATH"):
        folders += [Path(p) for p in os.environ.get(variable, "").split(os.pathsep) if p]
    roots = [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    if nvcc:
        roots.append(Path(nvcc).resolve().parent.parent)
    folders += [root / "include" for root in roots]
    try:
        import nvidia  # the namespace package of NVIDIA's wheels, where installed

        folders += [Path(p) / name / "include" for p in nvidia.__path__
                    for name in sorted(os.listdir(p)) if (Path(p) / name / "include").is_dir()]
    except ImportError:
        pass
    return folders


def nvidia_headers(tables: ApiTables, search: list[Path] | None = None) -> dict[str, str]:
    """Relative path -> content of every header of the NVIDIA include tree. With ``search``,
    wrappers of optional libraries (NCCL, cuDNN) are written only when their CUDA header is
    found in one of those folders."""
    from .templating import render

    files = {SHIM: render("nvidia/rocmigrate_nvidia.h.j2", version=__version__,
                          names=reverse_names(tables), typedefs=lowered_types(tables))}
    wrappers: dict[str, tuple[str, ...]] = {}
    for entry in tables.headers.values():
        hip = entry.hip_header
        if not hip or hip == "-" or entry.library in tables.report_only_libraries:
            continue
        if "/" not in hip:  # a C library header (cuda_stdint.h -> stdint.h): the system's own
            continue
        if (search is not None and entry.library in OPTIONAL_LIBRARIES
                and not any((folder / entry.cuda_header).is_file() for folder in search)):
            continue
        wrappers.setdefault(hip, (entry.cuda_header.replace("/*", "/cub.cuh"),))
    for low in tables.lowerings.values():  # the older HIP headers lowered code includes
        if low.kind == "header" and not low.replacement.startswith('"'):
            # (a quoted support header is written beside the output and serves nvcc itself)
            wrappers.setdefault(low.replacement, (low.cuda,))
    # HIP's runtime header also declares the driver API (hipDeviceptr_t is CUdeviceptr, from
    # cuda.h): code converted from `#include <cuda.h>` includes only hip/hip_runtime.h
    wrappers["hip/hip_runtime.h"] = ("cuda_runtime.h", "cuda.h")
    wrappers["hip/hip_runtime_api.h"] = ("cuda_runtime_api.h",)
    for hip, cuda in wrappers.items():
        alias = _NAMESPACE_ALIASES.get(hip)
        files[hip] = (f"// Generated by rocmigrate {__version__}: <{hip}> on NVIDIA is "
                      + " and ".join(f"<{name}>" for name in cuda) + ".\n#pragma once\n"
                      + "".join(f"#include <{name}>\n" for name in cuda) + f"#include <{SHIM}>\n"
                      + (f"namespace {alias[0]} = {alias[1]};\n" if alias else ""))
    return files


def write_nvidia_headers(tables: ApiTables, out: Path,
                         search: list[Path] | None = None) -> list[Path]:
    written = []
    for rel, text in sorted(nvidia_headers(tables, search).items()):
        path = out / rel
        atomic_write(path, text.encode())
        written.append(path)
    return written
