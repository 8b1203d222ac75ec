#!/usr/bin/env python3
"""Generate rocmigrate's CUDA->HIP API tables (rules/api/*.tsv) from HIPIFY's published tables.

Input (read only here, never at run time):
  SOURCE/hipify-api-tables/*.md        HIPIFY docs/tables (see SOURCE/README.md for the row format)
  SOURCE/hipify-argument-rewrites.tsv  CUDA functions whose HIP call needs argument changes

Output: one TSV per library in OUT (runtime.tsv, driver.tsv, ...), with the columns in HEADER.
The output is deterministic (rows sorted by CUDA name, '\\n' newlines, UTF-8), so that the
committed tables can be checked against a fresh run (tests/test_api_tables.py).

rules/api/manual.tsv, headers.tsv and argument_rewrites.tsv are hand-maintained and are not
written by this script.

Usage: python3 scripts/gen_api_tables.py [--source DIR] [--out DIR]
Stdlib only (Python >= 3.10).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "data"
DEFAULT_OUT = REPO_ROOT / "rules" / "api"

HEADER = (
    "cuda", "hip", "kind", "library", "section",
    "cuda_added", "cuda_deprecated", "cuda_removed",
    "hip_added", "hip_deprecated", "hip_removed",
    "experimental", "signature", "status",
)

# library -> (HIPIFY table file, expected title of the target column)
LIBRARIES: dict[str, tuple[str, str]] = {
    "runtime": ("CUDA_Runtime_API_functions_supported_by_HIP.md", "HIP"),
    "driver": ("CUDA_Driver_API_functions_supported_by_HIP.md", "HIP"),
    "device": ("CUDA_Device_API_supported_by_HIP.md", "HIP"),
    "complex": ("cuComplex_API_supported_by_HIP.md", "HIP"),
    "rtc": ("CUDA_RTC_API_supported_by_HIP.md", "HIP"),
    "cublas": ("CUBLAS_API_supported_by_HIP.md", "HIP"),        # hipBLAS names
    "curand": ("CURAND_API_supported_by_HIP.md", "HIP"),        # hipRAND names
    "cufft": ("CUFFT_API_supported_by_HIP.md", "HIP"),          # hipFFT names
    "cusparse": ("CUSPARSE_API_supported_by_HIP.md", "HIP"),    # hipSPARSE names
    "cusolver": ("CUSOLVER_API_supported_by_HIP.md", "HIP"),    # hipSOLVER names
    "cub": ("CUB_API_supported_by_HIP.md", "HIP"),              # hipCUB names
    # cuDNN is never renamed: we only report what MIOpen has (status report_only).
    "cudnn": ("CUDNN_API_supported_by_MIOPEN.md", "MIOPEN"),
}

# HIPIFY's argument rewrites for cuSPARSE (gpsv/gtsv *InterleavedBatch, csrilu02/csric02/bsr*
# policies, *_bufferSize int*->size_t*, csrgeam2, SpMV/SpMM stages, ...) all target rocSPARSE
# (hipify --roc): hipSPARSE, which this project maps cuSPARSE to, keeps cuSPARSE's argument lists
# (checked against /usr/include/hipsparse/hipsparse.h). So for these libraries a name in
# hipify-argument-rewrites.tsv does not make the HIP signature differ.
ROC_ONLY_REWRITE_LIBRARIES = {"cusparse"}

HEADING_RE = re.compile(r"^## \*\*(\d+)\.\s+(.*?)\*\*\s*$")
VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?$")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_:]*$")
TYPES_RE = re.compile(r"\b(data\s+types|types)\b", re.IGNORECASE)


class SourceError(Exception):
    pass


def _code(cell: str, where: str) -> str:
    """Strip the backticks of a `name` cell; '' for an empty cell."""
    cell = cell.strip()
    if not cell:
        return ""
    if len(cell) < 3 or cell[0] != "`" or cell[-1] != "`" or "`" in cell[1:-1]:
        raise SourceError(f"{where}: expected a `name` cell, got {cell!r}")
    return cell[1:-1].strip()


def _version(cell: str, where: str) -> str:
    cell = cell.strip()
    if cell and not VERSION_RE.match(cell):
        raise SourceError(f"{where}: bad version {cell!r}")
    return cell


def _kind(library: str, section: str) -> str:
    if TYPES_RE.search(section):
        return "type"
    if library == "device" and section.strip().lower() == "device functions":
        return "device_function"
    return "function"


def load_rewrites(path: Path) -> dict[str, str]:
    """CUDA name -> decoded change (column 2, may be '')."""
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            name, _, change = line.partition("\t")
            name = name.strip()
            if not IDENT_RE.match(name):
                raise SourceError(f"{path}:{lineno}: bad CUDA name {name!r}")
            out[name] = change.strip()
    return out


def parse_table(path: Path, library: str, target_title: str) -> list[dict[str, str]]:
    """Parse one HIPIFY table file into rows (dicts keyed by HEADER), in file order."""
    rows: list[dict[str, str]] = []
    section: str | None = None
    in_table = False
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.rstrip("\n").rstrip("\r")
            where = f"{path.name}:{lineno}"
            if line.startswith("## "):
                m = HEADING_RE.match(line)
                if not m:
                    raise SourceError(f"{where}: unexpected heading {line!r}")
                section = m.group(2).strip()
                in_table = False
                continue
            if not line.startswith("|"):
                in_table = False
                continue
            if not line.endswith("|"):
                raise SourceError(f"{where}: table row without trailing '|'")
            cells = line[1:-1].split("|")
            if line.startswith("|**"):
                titles = [c.strip().strip("*") for c in cells]
                if len(titles) != 11 or titles[0] != "CUDA" or titles[5] != target_title:
                    raise SourceError(f"{where}: unexpected table header {titles}")
                if section is None:
                    raise SourceError(f"{where}: table before any section heading")
                in_table = True
                continue
            if line.startswith("|:-"):
                continue
            if not in_table:
                raise SourceError(f"{where}: table row outside a table")
            if len(cells) != 11:
                raise SourceError(f"{where}: expected 11 cells, got {len(cells)}")
            cuda = _code(cells[0], where)
            if not IDENT_RE.match(cuda):
                raise SourceError(f"{where}: bad CUDA name {cuda!r}")
            hip = _code(cells[5], where)
            if any(ch in hip for ch in "\t\r\n"):
                raise SourceError(f"{where}: bad HIP name {hip!r}")
            assert section is not None
            rows.append({
                "cuda": cuda,
                "hip": hip,
                "kind": _kind(library, section),
                "library": library,
                "section": section,
                "cuda_added": _version(cells[1], where),
                "cuda_deprecated": _version(cells[2], where),
                # cells[3] is CUDA "Changed": not carried
                "cuda_removed": _version(cells[4], where),
                "hip_added": _version(cells[6], where),
                "hip_deprecated": _version(cells[7], where),
                # cells[8] is HIP "Changed": not carried
                "hip_removed": _version(cells[9], where),
                # E holds the version since which the name is experimental (or a mark)
                "experimental": "1" if cells[10].strip() else "",
                "signature": "identical",
                "status": "",
            })
    return rows


def dedupe(rows: list[dict[str, str]], label: str) -> list[dict[str, str]]:
    """One row per CUDA name: prefer a row with a HIP name; on conflicting HIP names keep the
    first and warn."""
    kept: dict[str, dict[str, str]] = {}
    for row in rows:
        prev = kept.get(row["cuda"])
        if prev is None:
            kept[row["cuda"]] = row
        elif not prev["hip"] and row["hip"]:
            kept[row["cuda"]] = row
        elif prev["hip"] and row["hip"] and prev["hip"] != row["hip"]:
            print(f"warning: {label}: {row['cuda']} maps to both {prev['hip']!r} and "
                  f"{row['hip']!r}; keeping {prev['hip']!r}", file=sys.stderr)
    return [kept[name] for name in sorted(kept)]


def signature_for(library: str, cuda: str, rewrites: dict[str, str]) -> str:
    if cuda in rewrites and library not in ROC_ONLY_REWRITE_LIBRARIES:
        return "differs"
    return "identical"


def render(rows: list[dict[str, str]]) -> str:
    out = ["\t".join(HEADER)]
    for row in rows:
        values = [row[col] for col in HEADER]
        for v in values:
            if "\t" in v or "\n" in v or "\r" in v:
                raise SourceError(f"{row['cuda']}: value with tab/newline {v!r}")
        out.append("\t".join(values))
    return "\n".join(out) + "\n"


def generate(source: Path, out: Path) -> dict[str, tuple[int, int]]:
    tables = source / "hipify-api-tables"
    rewrites = load_rewrites(source / "hipify-argument-rewrites.tsv")
    out.mkdir(parents=True, exist_ok=True)
    stats: dict[str, tuple[int, int]] = {}
    for library, (filename, target_title) in LIBRARIES.items():
        rows = dedupe(parse_table(tables / filename, library, target_title), filename)
        for row in rows:
            row["signature"] = signature_for(library, row["cuda"], rewrites)
            if library == "cudnn":
                row["status"] = "report_only"
            else:
                row["status"] = "supported" if row["hip"] else "unsupported"
        text = render(rows)
        with (out / f"{library}.tsv").open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        stats[library] = (len(rows), sum(1 for r in rows if r["hip"]))
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                    help="directory holding hipify-api-tables/ and hipify-argument-rewrites.tsv "
                         f"(default: {DEFAULT_SOURCE})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help=f"output directory (default: {DEFAULT_OUT})")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-file summary")
    args = ap.parse_args(argv)
    try:
        stats = generate(args.source, args.out)
    except (SourceError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        for library, (total, with_hip) in stats.items():
            print(f"{library}.tsv: {total} rows, {with_hip} with a HIP/MIOpen name")
    return 0


if __name__ == "__main__":
    sys.exit(main())
