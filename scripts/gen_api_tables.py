#!/usr/bin/env python3
"""Generate rocmigrate's CUDA->HIP API tables (rules/api/*.tsv) from HIPIFY's published tables.

Input (read only here, never at run time):
  SOURCE/hipify-api-tables/*.md        HIPIFY docs/tables (see SOURCE/README.md for the row format)
  SOURCE/hipify-argument-rewrites.tsv  CUDA functions whose HIP call needs argument changes

Output: one TSV per library in OUT (runtime.tsv, driver.tsv, ...), with the columns in HEADER,
and the library choices users opt into (`--roc`, `--dnn miopen`): OUT/roc/*.tsv (cuBLAS, cuRAND,
cuSPARSE, cuSOLVER -> rocBLAS, rocRAND, rocSPARSE, rocSOLVER, from HIPIFY's ROC columns) and
OUT/miopen/cudnn.tsv (cuDNN -> MIOpen, renamed). Their rows override the default tables' rows for
the same CUDA names when the option is set; calls whose ROC counterpart takes other arguments get
status `arguments_differ` (marked, not renamed). The output is deterministic (rows sorted by CUDA name, '\\n' newlines, UTF-8), so that the
committed tables can be checked against a fresh run (tests/test_api_tables.py).

rules/api/manual.tsv, headers.tsv, argument_rewrites.tsv and the variants' headers.tsv are
hand-maintained and are not written by this script.

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

# variant (a folder of OUT) -> library -> (HIPIFY table, target column title, library column).
# HIPIFY's ROC and MIOPEN version columns are ROCm releases, like its HIP columns (rocBLAS's
# 64-bit API: 6.2.0; MIOpen's: 2.1.0 up to 6.2.0).
VARIANTS: dict[str, dict[str, tuple[str, str, str]]] = {
    "roc": {
        "cublas": ("CUBLAS_API_supported_by_ROC.md", "ROC", "rocblas"),
        "curand": ("CURAND_API_supported_by_ROC.md", "ROC", "rocrand"),
        "cusparse": ("CUSPARSE_API_supported_by_ROC.md", "ROC", "rocsparse"),
        "cusolver": ("CUSOLVER_API_supported_by_ROC.md", "ROC", "rocsolver"),
    },
    "miopen": {
        "cudnn": ("CUDNN_API_supported_by_MIOPEN.md", "MIOPEN", "miopen"),
    },
}

# Calls whose ROC/MIOpen counterpart takes other arguments, beyond the names in
# hipify-argument-rewrites.tsv (whose cuSPARSE and cuDNN rewrites all target rocSPARSE and
# MIOpen): a rename alone would not compile or would pass the wrong values, so they are marked.
ARGUMENTS_DIFFER = frozenset({
    # parameter counts of rocSPARSE's prototypes differ from hipSPARSE's, which keeps cuSPARSE's
    # argument lists (Debian's rocSPARSE and hipSPARSE 2.3.2, ROCm 5.2.3; tests check every
    # function both declare)
    "cusparseBlockedEllGet", "cusparseCreateBlockedEll",
    "cusparseSbsrsm2_analysis", "cusparseDbsrsm2_analysis", "cusparseCbsrsm2_analysis",
    "cusparseZbsrsm2_analysis",
    "cusparseScsrgemm2_bufferSizeExt", "cusparseDcsrgemm2_bufferSizeExt",
    "cusparseCcsrgemm2_bufferSizeExt", "cusparseZcsrgemm2_bufferSizeExt",
    "cusparseXcsrgemm2Nnz", "cusparseXcsrsv2_zeroPivot",
    # the generic API's data type parameters: --roc renames cudaDataType and CUDA_R_32F & co. to
    # rocBLAS's rocblas_datatype (HIPIFY's cuBLAS rows) where rocSPARSE takes rocsparse_datatype
    # (the functions whose hipSPARSE 2.3.2 prototype takes a hipDataType)
    "cusparseCreateCoo", "cusparseCreateCooAoS", "cusparseCreateCsc", "cusparseCreateCsr",
    "cusparseCreateDnMat", "cusparseCreateDnVec", "cusparseCreateSpVec",
    "cusparseCooGet", "cusparseCooAoSGet", "cusparseCsrGet", "cusparseDnMatGet",
    "cusparseDnVecGet", "cusparseSpVecGet",
    "cusparseSDDMM", "cusparseSDDMM_bufferSize", "cusparseSDDMM_preprocess",
    # rocrand_make_state_mtgp32(state, params, n, seed): 4 parameters; cuRAND's and hipRAND's
    # MakeMTGP32KernelState take 5 (Debian's rocRAND and hipRAND, ROCm 5.2.3)
    "curandMakeMTGP32KernelState",
    # rocblas_gemm_ex & co. write a separate matrix D (d, d_type, ldd) and take a solution index
    # and flags: 24/26/29 parameters against cuBLAS's 19/20/23 (rocBLAS's rocblas.h; rocBLAS is
    # not in Debian: not compiled here)
    "cublasGemmEx", "cublasGemmBatchedEx", "cublasGemmStridedBatchedEx",
    # rocblas_Xtrmm is in place (no C, ldc) before rocBLAS 4.0 (ROCm 6.0); cuBLAS v2's is not
    "cublasStrmm", "cublasDtrmm", "cublasCtrmm", "cublasZtrmm",
    "cublasStrmm_v2", "cublasDtrmm_v2", "cublasCtrmm_v2", "cublasZtrmm_v2",
    # rocsolver_Xpotrf(handle, uplo, n, A, lda, info) takes no workspace nor its size
    # (rocSOLVER's rocsolver-functions.h; not in Debian)
    "cusolverDnSpotrf", "cusolverDnDpotrf", "cusolverDnCpotrf", "cusolverDnZpotrf",
    # MIOpen's dropout descriptor also takes use_mask, state_evo and rng_mode, its dropout calls a
    # noise shape, its CTC loss descriptor a blank label and a softmax flag, its LRN getter the
    # mode, and its RNN getter no handle (miopen.h; MIOpen is not in Debian: not compiled here)
    "cudnnSetDropoutDescriptor", "cudnnRestoreDropoutDescriptor", "cudnnGetDropoutDescriptor",
    "cudnnDropoutForward", "cudnnDropoutBackward",
    "cudnnSetCTCLossDescriptor", "cudnnGetCTCLossDescriptor",
    "cudnnGetLRNDescriptor", "cudnnGetRNNDescriptor",
})

# rocBLAS's complex and half precision functions take rocblas_float_complex*,
# rocblas_double_complex* and rocblas_half* (classes of their own), where the converted code
# passes hipFloatComplex* / hipDoubleComplex* (cuComplex.h's types) and __half*: C++ has no
# conversion between these pointers. They are the functions named as a real one (rocblas_sgemm,
# rocblas_isamax) with a complex or half prefix instead of s or d (rocblas_cgemm, rocblas_zdscal,
# rocblas_scnrm2, rocblas_icamax, rocblas_hgemm, rocblas_hshgemv_batched).
_TYPED_PREFIXES = ("hsh", "hss", "cs", "zd", "sc", "dz", "ic", "iz", "c", "z", "h")


def rocblas_typed_functions(functions: set[str]) -> set[str]:
    """The rocBLAS functions of ``functions`` that take complex or half precision arrays."""
    typed = set()
    for name in functions:
        rest = name.removeprefix("rocblas_")
        for prefix in (p for p in _TYPED_PREFIXES if name != rest and rest.startswith(p)):
            routine, _, tail = rest[len(prefix):].partition("_")
            # the real routine: dotc/dotu -> dot, gerc/geru -> ger, hemm/hbmv/hpr -> symm/sbmv/spr
            routines = {routine, routine[:-1] if routine[-1:] in ("c", "u") else routine,
                        {"he": "sy", "hb": "sb", "hp": "sp"}.get(routine[:2], "") + routine[2:]}
            twins = {f"rocblas_{real}{r}{suffix}" for r in routines
                     for real in (("is",) if prefix[0] == "i" else ("s", "d"))
                     for suffix in {"", f"_{tail}" if tail else ""}}  # (a real _64 may be missing)
            if twins & functions:
                typed.add(name)
    return typed


# HIPIFY's argument rewrites for cuSPARSE (gpsv/gtsv *InterleavedBatch, csrilu02/csric02/bsr*
# policies, *_bufferSize int*->size_t*, csrgeam2, SpMV/SpMM stages, ...) all target rocSPARSE
# (hipify --roc): hipSPARSE, which this project maps cuSPARSE to, keeps cuSPARSE's argument lists
# (checked against /usr/include/hipsparse/hipsparse.h). So for these libraries a name in
# hipify-argument-rewrites.tsv does not make the HIP signature differ.
ROC_ONLY_REWRITE_LIBRARIES = {"cusparse"}
# ... except these, whose hipSPARSE argument list is not cuSPARSE 12's (HIP 5.2.3's and ROCm
# 6.4's hipsparse.h: hipsparseSpSM_solve takes the analysis buffer after spsmDescr)
HIP_SIGNATURE_DIFFERS = {"cusparseSpSM_solve"}

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
    if cuda in rewrites and library not in ROC_ONLY_REWRITE_LIBRARIES or (
            cuda in HIP_SIGNATURE_DIFFERS):
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


HIP_52 = Path("/usr/include")  # Debian 12's HIP 5.2.3 and the ROCm libraries it packages
# CUDA name prefixes and the HIP ones the libraries spell them with (longest first)
HIP_PREFIXES = (("CUBLASLT_", "HIPBLASLT_"), ("cublasLt", "hipblasLt"), ("CUBLAS_", "HIPBLAS_"),
                ("cublas", "hipblas"), ("CUSPARSE_", "HIPSPARSE_"), ("cusparse", "hipsparse"),
                ("CUFFT_", "HIPFFT_"), ("cufft", "hipfft"), ("CURAND_", "HIPRAND_"),
                ("curand", "hiprand"), ("CUSOLVER_", "HIPSOLVER_"), ("cusolver", "hipsolver"),
                ("CUDA_", "HIP_"), ("cuda", "hip"), ("CU_", "HIP_"))


def declared_names(include: Path) -> set[str]:
    """Every identifier of a header tree (the ROCm 6.4 headers beside the HIPIFY tables)."""
    found: set[str] = set()
    for path in sorted(include.rglob("*.h*")) if include.is_dir() else ():
        found.update(re.findall(r"\b[A-Za-z_]\w*\b", path.read_text(encoding="utf-8",
                                                                  errors="replace")))
    return found


def hip_spelling(cuda: str) -> str:
    """The name a HIP library spells a CUDA name with (its prefix replaced: cublasSgeam_64 ->
    hipblasSgeam_64), or '' for a name with none of HIP_PREFIXES."""
    for prefix, hip in HIP_PREFIXES:
        if cuda.startswith(prefix):
            return hip + cuda[len(prefix):]
    return ""


# docs/api_signature_evidence.tsv, written by scripts/compare_api_signatures.py (libclang on CUDA
# 13's and ROCm 6.4's headers): the functions of the tables with no HIP name whose HIP spelling
# ROCm 6.4 declares, and whether it takes the same parameters
SIGNATURE_EVIDENCE = REPO_ROOT / "docs" / "api_signature_evidence.tsv"


def load_signature_evidence(path: Path = SIGNATURE_EVIDENCE) -> dict[str, tuple[str, str]]:
    """CUDA function -> (its HIP counterpart, the release from which that takes CUDA's
    parameters: '5.2.0' or '6.4.0'), for the functions the evidence says ``same``."""
    if not path.is_file():
        return {}
    lines = [line.split("\t") for line in path.read_text(encoding="utf-8").split("\n")
             if line and not line.startswith("#")]
    header = lines[0]
    rows = [dict(zip(header, cells)) for cells in lines[1:]]
    return {row["cuda"]: (row["hip"], "5.2.0" if row["in_5.2"] == "same" else "6.4.0")
            for row in rows if row["verdict"] == "same"}


def promote_declared(row: dict[str, str], declared: set[str], declared_52: set[str],
                     same_functions: dict[str, tuple[str, str]]) -> None:
    """A name HIPIFY's table has no HIP name for, whose HIP spelling the ROCm 6.4 headers
    declare: a type or constant (CUBLASLT_EPILOGUE_RELU_AUX, CUDA_R_8F_E4M3,
    CUFFT_COPY_HOST_TO_DEVICE...) is supported from 5.2.0 where HIP 5.2.3's headers declare it
    too, else from 6.4.0 (the releases rocmigrate can vouch for); a function only where a HIP
    function takes its parameters (``same_functions``, from docs/api_signature_evidence.tsv:
    that function, and the release from which it does)."""
    if row["hip"] or not declared:
        return
    name = hip_spelling(row["cuda"])
    if row["kind"] == "function":
        if row["cuda"] in same_functions and name in declared:
            row["hip"], row["hip_added"] = same_functions[row["cuda"]]
    elif name in declared:
        row["hip"] = name
        row["hip_added"] = "5.2.0" if name in declared_52 else "6.4.0"


def write_evidence(out: Path, text: str, check: bool) -> int:
    """Write an evidence file (or, with ``check``, say whether the committed one is up to
    date): the exit status of the scripts that make them (verify_api_versions.py,
    compare_api_signatures.py)."""
    if check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'up to date' if same else 'differs from the headers'}")
        return 0 if same else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(next(line[2:] for line in text.split("\n") if line.startswith("# rows: ")))
    return 0


def generate(source: Path, out: Path) -> dict[str, tuple[int, int]]:
    tables = source / "hipify-api-tables"
    rewrites = load_rewrites(source / "hipify-argument-rewrites.tsv")
    declared = declared_names(source / "hip-6.4" / "include")
    declared_52 = set().union(*(declared_names(HIP_52 / folder) for folder in (
        "hip", "hipblas", "hipfft", "hipsparse", "hiprand", "hipsolver", "hipcub", "rccl")))
    same_functions = load_signature_evidence()
    out.mkdir(parents=True, exist_ok=True)
    stats: dict[str, tuple[int, int]] = {}
    for library, (filename, target_title) in LIBRARIES.items():
        rows = dedupe(parse_table(tables / filename, library, target_title), filename)
        for row in rows:
            row["signature"] = signature_for(library, row["cuda"], rewrites)
            if library != "cudnn":
                promote_declared(row, declared, declared_52, same_functions)
            if library == "cudnn":
                row["status"] = "report_only"
            else:
                row["status"] = "supported" if row["hip"] else "unsupported"
        text = render(rows)
        with (out / f"{library}.tsv").open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        stats[library] = (len(rows), sum(1 for r in rows if r["hip"]))
    marked: set[str] = set()
    for variant, libraries in VARIANTS.items():
        (out / variant).mkdir(exist_ok=True)
        for library, (filename, target_title, label) in libraries.items():
            rows = dedupe(parse_table(tables / filename, label, target_title), filename)
            typed = rocblas_typed_functions({r["hip"] for r in rows if r["kind"] == "function"})
            for row in rows:
                differs = (row["cuda"] in rewrites or row["cuda"] in ARGUMENTS_DIFFER
                           or row["hip"] in typed)
                row["signature"] = "differs" if differs else "identical"
                row["status"] = ("unsupported" if not row["hip"] else
                                 "arguments_differ" if differs else "supported")
                if row["hip"] and row["cuda"] in ARGUMENTS_DIFFER:
                    marked.add(row["cuda"])
            with (out / variant / f"{library}.tsv").open("w", encoding="utf-8",
                                                         newline="\n") as fh:
                fh.write(render(rows))
            stats[f"{variant}/{library}"] = (len(rows), sum(1 for r in rows if r["hip"]))
    if ARGUMENTS_DIFFER - marked:
        print("warning: ARGUMENTS_DIFFER names no ROC/MIOpen function: "
              + ", ".join(sorted(ARGUMENTS_DIFFER - marked)), file=sys.stderr)
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
            print(f"{library}.tsv: {total} rows, {with_hip} with a HIP/ROC/MIOpen name")
    return 0


if __name__ == "__main__":
    sys.exit(main())
