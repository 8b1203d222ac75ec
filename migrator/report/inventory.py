"""Inventory and readiness: per file and per folder, what the tree holds (lines, kernels,
launch sites, CUDA references by library, inline PTX, textures, warp intrinsics, build files)
and what its port costs under the effort model."""

from __future__ import annotations

import posixpath
import re
from collections import Counter

from ..apitables import library_named
from .effort import CLASSES, EffortModel
from .scan import FileScan

_TEXTURE = re.compile(r"^(?:tex|surf)(?:[123]D|Cubemap)|Texture|Surface|^texture$|^surface$")
_WARP = re.compile(r"^__(?:shfl|ballot|any|all|activemask|syncwarp|lanemask|reduce_\w+_sync|"
                   r"match_\w+_sync)|^(?:__)?(?:warpSize|WARP_SIZE)$")
# the finding libraries (API tables' column) as rules/build/libraries.tsv names them (link names)
_LINK_NAMES = {"runtime": "cudart", "driver": "cuda", "cublas": "cublas", "curand": "curand",
               "cufft": "cufft", "cusparse": "cusparse", "cusolver": "cusolver",
               "cudnn": "cudnn", "cub": "cub", "rtc": "nvrtc", "nccl": "nccl",
               "nvtx": "nvToolsExt", "cupti": "cupti", "nvml": "nvml", "npp": "nppc",
               "nvjpeg": "nvjpeg", "cufile": "cufile", "thrust": "thrust"}


def families() -> dict[str, str]:
    """Each rule code's family (the registry's)."""
    from .. import registry

    return {code: cls.family for cls in registry.all_rules() for code in cls.codes()}


def optimization_codes() -> frozenset[str]:
    from .. import registry

    return frozenset(code for cls in registry.all_rules() if cls.optimization
                     for code in cls.codes())


def file_record(scan: FileScan, model: EffortModel, family_of: dict, optimizing: frozenset,
                folder_of=posixpath.dirname) -> dict:
    """One file's inventory, readiness and work items (every finding a person must see)."""
    references: Counter = Counter()
    classes: Counter = Counter()
    by_code: Counter = Counter()
    hours = {"port": 0.0, "optimisation": 0.0}
    class_hours: Counter = Counter()  # the port's hours per class
    automatic_lines, person_lines = set(), set()
    textures = warp = ptx = 0
    work = []
    # findings repeat a few combinations: each is classified and counted once
    decided: dict[tuple, tuple[str, str, float]] = {}
    for key, count in Counter((row.code, row.kind, row.fixed, row.severity, row.library,
                               row.symbol) for row in scan.rows).items():
        code, kind, fixed, severity, library, symbol = key
        family = family_of.get(code, "")
        klass = model.classify(code, kind, fixed, severity, family)
        phase = "optimisation" if code in optimizing else "port"
        cost = model.cost(code, klass)
        decided[key[:4]] = klass, phase, cost
        references[library] += count if library else 0
        ptx += count if code == "PTX001" else 0
        textures += count if _TEXTURE.search(symbol) else 0
        warp += count if _WARP.search(symbol) or family == "wavefront" else 0
        classes[klass] += count
        by_code[code] += count
        hours[phase] += cost * count
        if phase == "port":
            class_hours[klass] += cost * count
    for row in scan.rows:
        klass, phase, cost = decided[row.code, row.kind, row.fixed, row.severity]
        if klass == "automatic":
            automatic_lines.add(row.line)
            continue
        person_lines.add(row.line)
        work.append({"code": row.code, "class": klass, "phase": phase, "line": row.line,
                     "symbol": row.symbol, "library": row.library, "message": row.message,
                     "fixed": row.fixed,
                     "hours": cost})
    return {"path": scan.rel, "folder": folder_of(scan.rel) or ".", "kind": scan.kind,
            "status": scan.status, "note": scan.note, "lines": scan.lines,
            "kernels": scan.kernels, "launches": scan.launches, "markers": scan.markers,
            "references": dict(sorted((k, n) for k, n in references.items() if k)),
            "inline_ptx": ptx,
            "textures": textures, "warp_intrinsics": warp, "patterns": list(scan.patterns),
            "findings": {name: classes[name] for name in CLASSES},
            "codes": dict(sorted(by_code.items())),
            "lines_automatic": len(automatic_lines - person_lines),
            "lines_for_a_person": len(person_lines),
            "hours": {name: round(value, 3) for name, value in hours.items()},
            "hours_by_class": {name: round(class_hours[name], 3) for name in CLASSES},
            "includes": list(scan.includes), "work": work}


_SUMMED = ("lines", "kernels", "launches", "markers", "inline_ptx", "textures",
           "warp_intrinsics", "lines_automatic", "lines_for_a_person")


def totals(records: list[dict]) -> dict:
    """The sums of file records (a folder's, or the tree's)."""
    total = {name: sum(record[name] for record in records) for name in _SUMMED}
    references: Counter = Counter()
    classes: Counter = Counter()
    class_hours: Counter = Counter()
    for record in records:
        references.update(record["references"])
        classes.update(record["findings"])
        class_hours.update(record["hours_by_class"])
    total.update(files=len(records),
                 source_files=sum(record["kind"] == "source" for record in records),
                 build_files=sum(record["kind"] == "build" for record in records),
                 failed_files=sum(record["status"] == "failed" for record in records),
                 references=dict(sorted(references.items())),
                 findings={name: classes[name] for name in CLASSES},
                 hours_by_class={name: round(class_hours[name], 3) for name in CLASSES},
                 hours={phase: round(sum(record["hours"][phase] for record in records), 3)
                        for phase in ("port", "optimisation")})
    return total


def folders(records: list[dict]) -> list[dict]:
    """Per folder (its own files), sorted by path."""
    grouped: dict[str, list[dict]] = {}
    for record in records:
        grouped.setdefault(record["folder"], []).append(record)
    return [dict(totals(group), path=folder) for folder, group in sorted(grouped.items())]


def libraries_needed(records: list[dict], roc: bool) -> list[dict]:
    """The libraries the port needs on AMD: each library the tree references (or, for Thrust
    and NCCL, includes), its AMD counterpart from rules/build/libraries.tsv, and whether a build
    can use it as it is (``mapped``) or the sources need porting (``marked``)."""
    used: Counter = Counter()
    for record in records:
        used.update(record["references"])
        used.update({pattern: 1 for pattern in record["patterns"] if pattern == "thrust"})
    needed = []
    for name, count in sorted(used.items()):
        link = _LINK_NAMES.get(name)
        library = library_named(link, roc) if link else None
        if library is None:
            continue  # device functions, complex numbers: in HIP's runtime headers
        needed.append({"cuda": name, "references": count,
                       "amd": library.package or library.link,
                       "status": "mapped" if library.mapped else "marked", "note": library.note})
    return needed
