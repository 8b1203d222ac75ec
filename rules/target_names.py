"""What the conversion writes for a CUDA API name at a target ROCm, read from the tables alone:
API001's HIP name, a lowering's replacement. The rules that write the names and the markers
that quote code as converted share it."""

from __future__ import annotations

from migrator.apitables import ApiEntry, Lowering


def renamable(entry: ApiEntry | None, rocm) -> bool:
    """True when API001 renames this entry for the target (a HIP name that exists there)."""
    return (entry is not None and entry.status == "supported" and bool(entry.hip)
            and (entry.hip_added is None or entry.hip_added <= rocm)
            and (entry.hip_removed is None or entry.hip_removed > rocm))


def replacement_of(low: Lowering) -> str:
    """What replaces a lowering row's CUDA name: its ``replacement``, or where that is empty the
    function or type of rocmigrate_bf16.h that stands for it (``__nv_bfloat162`` ->
    ``rocmigrate_bfloat162``)."""
    return low.replacement or "rocmigrate_" + low.cuda.lstrip("_").removeprefix("nv_")
