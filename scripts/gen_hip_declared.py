#!/usr/bin/env python3
"""Generate the tables of what HIP declares that three portability rules compare CUDA code with,
from the real headers of HIP 5.2.3 (Debian's, /usr/include) and HIP 6.4.3 (beside the checkout),
and CUDA 13's (/usr/local/cuda/include):

  rules/portability/hip_atomic_overloads.tsv  the atomic*() overloads HIP defines (RDF001: a
      user definition with the same parameter types is a redefinition)
  rules/portability/device_prop_fields.tsv    cudaDeviceProp's fields and whether each HIP's
      hipDeviceProp_t has them (DPF001)
  rules/portability/cooperative_groups.tsv    CUDA's cooperative-groups names and whether each
      HIP's amd_hip_cooperative_groups.h has them (CGM001)

Each table says, per name, whether HIP 5.2 and HIP 6.4 have it (yes/no): the first release in
between that added a name is not known from two header trees, so a rule treats a target older
than 6.4 as 5.2 has it (conservative: a name added in between is reported there).

Usage: python3 scripts/gen_hip_declared.py [--hip52 DIR] [--hip64 DIR] [--cuda DIR] [--out DIR]
Stdlib only (Python >= 3.10).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rules.portability.builtin_redefinition import parameter_type  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# an atomic function's definition or declaration: return type, name, parameters
_ATOMIC = re.compile(r"\b(atomic[A-Z]\w*)\s*\(([^()]*)\)\s*(?:\{|;|__attribute__|noexcept)")
_FIELD = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?::\s*\d+\s*)?;")
# CUDA's documented cooperative-groups API (CUDA 13.0 programming guide): group members and
# the free names of namespace cooperative_groups; each is checked to be in CUDA's headers
CG_MEMBERS = ("thread_rank", "size", "num_threads", "group_index", "thread_index", "dim_threads",
              "block_rank", "num_blocks", "block_index", "dim_blocks", "group_dim",
              "meta_group_rank", "meta_group_size", "is_valid", "sync", "barrier_arrive",
              "barrier_wait", "shfl", "shfl_down", "shfl_up", "shfl_xor", "any", "all", "ballot",
              "match_any", "match_all", "cluster_rank", "num_clusters", "block_dim",
              "cluster_index", "dim_clusters")
CG_FREE = ("this_thread_block", "this_grid", "this_cluster",
           "coalesced_threads", "tiled_partition", "binary_partition", "labeled_partition",
           "block_tile_memory", "invoke_one", "invoke_one_broadcast", "reduce", "reduce_store_async",
           "reduce_update_async", "inclusive_scan", "exclusive_scan", "memcpy_async", "wait",
           "wait_prior", "thread_block", "thread_block_tile", "grid_group",
           "coalesced_group", "thread_group", "cluster_group")


# cudaDeviceProp fields CUDA 13.0 removed (its release notes: use cudaDeviceGetAttribute)
CUDA_13_REMOVED_FIELDS = ("clockRate", "deviceOverlap", "kernelExecTimeoutEnabled", "computeMode",
                          "maxTexture1DLinear", "memoryClockRate",
                          "singleToDoublePrecisionPerfRatio", "cooperativeMultiDeviceLaunch")


def _text(path: Path) -> str:
    return _COMMENTS.sub(" ", path.read_text(encoding="utf-8", errors="replace"))


def _type_of(parameter: str) -> str:
    """A parameter's type as the tables and RDF001 write it (HIP's headers spell no aliases)."""
    return parameter_type(parameter, {})


def atomic_overloads(hip_dir: Path) -> set[tuple[str, str]]:
    """(name, 'type, type...') of each atomic function amd_hip_atomic.h (and the unsafe
    atomics' header) declare for the AMD platform."""
    found = set()
    for name in ("amd_hip_atomic.h", "amd_hip_unsafe_atomics.h"):
        path = hip_dir / "hip" / "amd_detail" / name
        if not path.is_file():
            continue
        for match in _ATOMIC.finditer(_text(path)):
            parameters = [p for p in match.group(2).split(",") if p.strip()]
            if not parameters or any(len(p.replace("*", " ").split()) < 2 for p in parameters):
                continue  # a call (atomicCAS(address, old, val);), not a declaration
            found.add((match.group(1), ", ".join(_type_of(p) for p in parameters)))
    return found


def struct_fields(text: str, opening: str) -> list[str]:
    """The field names of the first struct whose body follows ``opening``, in order."""
    start = text.index(opening)
    body = text[text.index("{", start) + 1 : text.index("}", start)]
    return [m.group(1) for m in _FIELD.finditer(body)]


def _cg_names(hip_dir: Path) -> set[str]:
    words = set()
    for name in ("amd_hip_cooperative_groups.h", "hip_cooperative_groups_helper.h"):
        path = hip_dir / "hip" / "amd_detail" / name
        if path.is_file():
            words.update(re.findall(r"[A-Za-z_]\w*", _text(path)))
    return words


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hip52", type=Path, default=Path("/usr/include"))
    parser.add_argument("--hip64", type=Path,
                        default=REPO_ROOT.parent / "shared" / "data" / "hip-6.4" / "include")
    parser.add_argument("--cuda", type=Path, default=Path("/usr/local/cuda/include"))
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "rules" / "portability")
    args = parser.parse_args()
    source = "generated by scripts/gen_hip_declared.py from HIP 5.2.3, HIP 6.4.3 and CUDA 13.0 headers"

    old, new = atomic_overloads(args.hip52), atomic_overloads(args.hip64)
    lines = [f"# {source}: atomic*() overloads HIP defines for AMD",
             "name\tparameters\thip_5_2\thip_6_4"]
    lines += [f"{n}\t{p}\t{_yes((n, p) in old)}\t{_yes((n, p) in new)}" for n, p in sorted(old | new)]
    (args.out / "hip_atomic_overloads.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")

    cuda = struct_fields(_text(args.cuda / "driver_types.h"), "struct __device_builtin__ cudaDeviceProp")
    hip = [set(struct_fields(_text(d / "hip" / "hip_runtime_api.h"), "typedef struct hipDeviceProp_t"))
           for d in (args.hip52, args.hip64)]
    # code written for CUDA 12 and older reads fields CUDA 13 removed: those, and every field of
    # HIP 6.4's struct (HIP keeps CUDA's older fields), are rows too
    cuda += [f for f in sorted(set(CUDA_13_REMOVED_FIELDS) | (hip[1] - set(cuda)))
             if f not in cuda and not f.lower().startswith(("reserved", "hipreserved", "__"))]
    # the attribute HIP 5.2 reads a scalar field through (hipDeviceAttribute + the field's name,
    # capitalised; regsPerMultiprocessor is HIP's MaxRegistersPerMultiprocessor): DPF001 reads a
    # field the target's struct lacks so
    text52 = _text(args.hip52 / "hip" / "hip_runtime_api.h")
    attributes = set(re.findall(r"\b(hipDeviceAttribute\w+)\s*[,=]", text52))
    arrays = set(re.findall(r"([A-Za-z_]\w*)\s*\[", _text(args.cuda / "driver_types.h")))
    arrays |= set(re.findall(r"([A-Za-z_]\w*)\s*\[", _text(args.hip64 / "hip" / "hip_runtime_api.h")))
    renamed = {"regsPerMultiprocessor": "hipDeviceAttributeMaxRegistersPerMultiprocessor"}
    struct = _text(args.hip64 / "hip" / "hip_runtime_api.h")
    struct = struct[struct.index("typedef struct hipDeviceProp_t"):]
    integers = set(re.findall(r"\b(?:int|unsigned int|size_t)\s+([A-Za-z_]\w*)\s*;",
                              struct[:struct.index("}")]))

    def attribute_of(field: str) -> str:
        name = renamed.get(field, "hipDeviceAttribute" + field[:1].upper() + field[1:])
        return name if name in attributes and field not in arrays and (
            field in integers) else ""

    lines = [f"# {source}: cudaDeviceProp's fields (driver_types.h; and those CUDA 13.0 removed, "
             "and hipDeviceProp_t's others) in hipDeviceProp_t (hip_runtime_api.h), and the "
             "hipDeviceAttribute_t of HIP 5.2.3 that reads a scalar one",
             "field\thip_5_2\thip_6_4\tattribute"]
    lines += [f"{f}\t{_yes(f in hip[0])}\t{_yes(f in hip[1])}\t{attribute_of(f)}" for f in cuda]
    (args.out / "device_prop_fields.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")

    cuda_words = set()
    for path in [args.cuda / "cooperative_groups.h", *(args.cuda / "cooperative_groups").rglob("*.h")]:
        cuda_words.update(re.findall(r"[A-Za-z_]\w*", _text(path)))
    hip = [_cg_names(d) for d in (args.hip52, args.hip64)]
    lines = [f"# {source}: cooperative-groups names (kind member: of a group object; free: in "
             "namespace cooperative_groups) as words of amd_hip_cooperative_groups.h",
             "name\tkind\thip_5_2\thip_6_4"]
    for kind, names in (("member", CG_MEMBERS), ("free", CG_FREE)):
        for name in names:
            if name not in cuda_words:
                raise SystemExit(f"{name} is not in CUDA's cooperative_groups headers")
            lines.append(f"{name}\t{kind}\t{_yes(name in hip[0])}\t{_yes(name in hip[1])}")
    (args.out / "cooperative_groups.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
