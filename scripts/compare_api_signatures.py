#!/usr/bin/env python3
"""Compare the parameter lists of the library functions HIPIFY's tables call unsupported with
the same-name HIP functions that ROCm 6.4's headers declare.

HIPIFY's tables (a late-2024 snapshot) give no HIP name for about eighty CUDA library functions
whose HIP spelling (gen_api_tables.hip_spelling: cublasSgeam_64 -> hipblasSgeam_64,
cufftXtMalloc -> hipfftXtMalloc) ROCm 6.4 declares. A rename is right only where the HIP
function takes what the CUDA one takes: as many parameters, each of the CUDA parameter's type
renamed to HIP through the API tables (cuComplex -> hipComplex, cublasHandle_t ->
hipblasHandle_t), or of the same type once typedefs are resolved (int64_t, long long). libclang
reads both declarations: CUDA's from CUDA 13's headers, HIP's from ROCm 6.4's (and HIP 5.2.3's
for the HIP runtime and hipSPARSE: Debian's /usr/include); a name defined as another name
(``#define hipblasChemm_64 hipblasChemm_v2_64``, cublas_v2.h's ``cublasSgemm``) is compared
as the function it names.

Output (--out, default docs/api_signature_evidence.tsv): one row per such function, with the
verdict: ``same`` (gen_api_tables.promote_declared renames it, from 5.2.0 where HIP 5.2.3
declares it the same way too, else from 6.4.0) or ``differs: <why>`` (it stays unsupported).
Deterministic output; the generator reads it, no rule does.

Header trees (read only here, never at run time):
  --cuda DIR     CUDA 13 headers with the libraries' (cublas_api.h, cublasLt.h, cufftXt.h,
                 cusparse.h, cusolverSp.h...): repeat it for each folder (the CUDA toolkit's
                 /usr/local/cuda/include and the include folder of PyPI's nvidia-cublas,
                 nvidia-cufft, nvidia-cusparse and nvidia-cusolver wheels, nvidia/cu13/include)
  --hip64 DIR    ROCm 6.4 (../shared/data/hip-6.4/include)
  --hip52 DIR    Debian 12's /usr/include (HIP 5.2.3, hipSPARSE of ROCm 5.3)

Usage: python3 scripts/compare_api_signatures.py --cuda /usr/local/cuda/include --cuda WHEELS
       --hip64 ../shared/data/hip-6.4/include [--hip52 /usr/include] [--out FILE] [--check]
Needs the libclang wheel and clang's builtin headers (see migrator/clang/check.py).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import gen_api_tables  # noqa: E402
from migrator.clang.check import clang_arguments, find_resource_dir  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "docs" / "api_signature_evidence.tsv"
COLUMNS = ("cuda", "hip", "library", "verdict", "other_names", "in_5.2", "cuda_parameters",
           "hip_parameters")
# the headers that declare each library's functions: CUDA's, and HIP's (a folder of the tree)
CUDA_HEADERS = {"runtime": ("cuda_runtime_api.h",), "driver": ("cuda.h",),
                "cublas": ("cublas_v2.h", "cublasLt.h"), "cufft": ("cufft.h", "cufftXt.h"),
                "cusparse": ("cusparse.h",), "curand": ("curand.h",),
                "cusolver": ("cusolverDn.h", "cusolverSp.h")}
HIP_HEADERS = {"runtime": "hip/hip_runtime.h", "driver": "hip/hip_runtime.h",
               "cublas": "hipblas/hipblas.h", "cublasLt": "hipblaslt/hipblaslt.h",
               "cufft": "hipfft/hipfftXt.h", "cusparse": "hipsparse/hipsparse.h",
               "curand": "hiprand/hiprand.h", "cusolver": "hipsolver/hipsolver.h"}
# the folders of Debian's /usr/include that a program including the HIP 5.2 headers reaches
HIP52_FOLDERS = ("hip", "hipsparse", "rocsparse", "hiprand", "rocrand")
HIP52_HEADERS = ("hip/hip_runtime.h", "hipsparse/hipsparse.h")


class SetupError(Exception):
    """Headers that are missing or do not parse: nothing could be compared."""


@dataclass(frozen=True)
class Parameter:
    spelled: str  # the type as written (typedef names kept), cv and spaces normalised
    canonical: str  # the type with every typedef resolved


def candidates(source: Path, hip64: Path) -> list[tuple[str, tuple[str, ...], str]]:
    """(CUDA name, HIP names to try, library) of each function row HIPIFY's tables give no HIP
    name for whose HIP spelling the ROCm 6.4 headers spell (cuDNN aside: reported, never
    renamed). The names tried: that spelling, then for a 64-bit cuBLAS function (``_64``) the
    HIP name the tables give its 32-bit twin with ``_64`` (cublasCdgmm -> hipblasCdgmm_v2, so
    cublasCdgmm_64 -> hipblasCdgmm_v2_64: hipBLAS's complex and ``Ex`` functions that take
    hipComplex and hipDataType, as the tables' other rows do)."""
    declared = gen_api_tables.declared_names(hip64)
    found = []
    for library, (filename, title) in gen_api_tables.LIBRARIES.items():
        if library == "cudnn":
            continue
        rows = gen_api_tables.dedupe(gen_api_tables.parse_table(
            source / "hipify-api-tables" / filename, library, title), filename)
        hip_names = {row["cuda"]: row["hip"] for row in rows}
        for row in rows:
            hip = gen_api_tables.hip_spelling(row["cuda"])
            if row["kind"] != "function" or row["hip"] or hip not in declared:
                continue
            twin = hip_names.get(row["cuda"].removesuffix("_64")) if row["cuda"].endswith(
                "_64") else None
            tried = (hip,) + ((twin + "_64",) if twin and twin + "_64" != hip else ())
            found.append((row["cuda"], tried, library))
    return sorted(found)


def _normal(spelling: str) -> str:
    """A type's spelling with single spaces, none around ``*`` and ``&``, and no ``struct``,
    ``enum`` or ``union`` before a name (``const struct cudaExternalMemoryMipmappedArrayDesc*``
    and ``const hipExternalMemoryMipmappedArrayDesc*``, its typedef, are passed the same)."""
    text = re.sub(r"\b(?:struct|enum|union)\s+", "", spelling.strip())
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s*([*&])\s*", r"\1", text)


def _parse(program: str, arguments: list[str], suffix: str) -> dict[str, object]:
    """Function declarations and one-name macros of a program: name -> [Parameter] or the name
    a macro stands for."""
    import clang.cindex as cindex

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch, "all" + suffix)
        path.write_text(program, encoding="utf-8")
        unit = cindex.Index.create().parse(
            str(path), args=arguments,
            options=cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
            | cindex.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
    errors = [d for d in unit.diagnostics if d.severity >= cindex.Diagnostic.Error]
    if errors:
        raise SetupError(f"the headers do not parse: {errors[0]}")
    found: dict[str, object] = {}

    def visit(cursor) -> None:
        for child in cursor.get_children():
            if child.kind == cindex.CursorKind.FUNCTION_DECL:
                found.setdefault(child.spelling, [
                    Parameter(_normal(argument.type.spelling),
                              _normal(argument.type.get_canonical().spelling))
                    for argument in child.get_arguments()])
            elif child.kind == cindex.CursorKind.MACRO_DEFINITION:
                tokens = [token.spelling for token in child.get_tokens()]
                if len(tokens) == 2 and re.fullmatch(r"[A-Za-z_]\w*", tokens[1]):
                    found.setdefault(child.spelling, tokens[1])
            elif child.kind in (cindex.CursorKind.LINKAGE_SPEC, cindex.CursorKind.NAMESPACE,
                                cindex.CursorKind.UNEXPOSED_DECL):
                visit(child)

    visit(unit.cursor)
    return found


def _resolved(declared: dict[str, object], name: str) -> list[Parameter] | None:
    """The parameters of the function ``name`` is, through one-name macros."""
    for _ in range(8):
        found = declared.get(name)
        if not isinstance(found, str):
            return found
        name = found
    return None


def cuda_declarations(folders: list[Path], resource_dir: Path, libraries: set[str]
                      ) -> dict[str, object]:
    """The declarations of CUDA's headers of ``libraries``."""
    headers = sorted({header for library in libraries for header in CUDA_HEADERS[library]})
    missing = [h for h in headers if not any((folder / h).is_file() for folder in folders)]
    if missing:
        raise SetupError(f"no {', '.join(missing)} in the --cuda folders")
    arguments = ["-x", "c++", "-std=c++17", "-resource-dir", str(resource_dir)]
    arguments += [f"-I{folder}" for folder in folders]
    return _parse("".join(f"#include <{h}>\n" for h in headers), arguments, ".cpp")


def hip_declarations(root: Path, headers: tuple[str, ...], resource_dir: Path,
                     folders: tuple[str, ...] | None = None) -> dict[str, object]:
    """A tree's declarations; with ``folders``, the tree is reached through links to those
    folders alone (Debian's /usr/include given with -isystem would break libstdc++'s
    #include_next)."""
    with tempfile.TemporaryDirectory() as scratch:
        include = root
        if folders is not None:
            include = Path(scratch, "include")
            include.mkdir()
            for folder in folders:
                if (root / folder).is_dir():
                    (include / folder).symlink_to(root / folder)
        return _parse("".join(f"#include <{h}>\n" for h in headers),
                      clang_arguments(include, resource_dir, "host"), ".hip")


def hip_type(spelled: str, renames: dict[str, str]) -> str:
    """A CUDA type's spelling with each CUDA name renamed to HIP through the tables."""
    return re.sub(r"[A-Za-z_]\w*", lambda m: renames.get(m.group(), m.group()), spelled)


def compare(cuda: list[Parameter], hip: list[Parameter], renames: dict[str, str]) -> str:
    """``same``, or ``differs: <the first difference>``."""
    if len(cuda) != len(hip):
        return f"differs: {len(cuda)} parameters in CUDA, {len(hip)} in HIP"
    for number, (ours, theirs) in enumerate(zip(cuda, hip), 1):
        renamed = hip_type(ours.spelled, renames)
        if renamed != theirs.spelled and ours.canonical != theirs.canonical:
            return (f"differs: parameter {number} is {ours.spelled} in CUDA ({renamed} renamed), "
                    f"{theirs.spelled} in HIP")
    return "same"


def _verdict(ours: list[Parameter] | None, theirs: list[Parameter] | None,
             renames: dict[str, str]) -> str:
    if ours is None:
        return "differs: no CUDA 13 declaration of it (removed, or not in these headers)"
    if theirs is None:
        return "differs: ROCm 6.4 spells the name but declares no such function"
    return compare(ours, theirs, renames)


def evidence(rows: list[tuple[str, tuple[str, ...], str]], cuda: dict, hip64: dict,
             hip52: dict | None, renames: dict[str, str]) -> list[list[str]]:
    """A row per candidate: the first HIP name tried that takes the same parameters (else the
    first, and why it differs)."""
    out = []
    for name, tried, library in rows:
        ours = _resolved(cuda, name)
        verdicts = [_verdict(ours, _resolved(hip64, hip), renames) for hip in tried]
        chosen = next((i for i, verdict in enumerate(verdicts) if verdict == "same"), 0)
        hip_name, verdict = tried[chosen], verdicts[chosen]
        note = "; ".join(f"{hip}: {other.removeprefix('differs: ')}"
                         for hip, other in zip(tried, verdicts) if hip != hip_name)
        theirs = _resolved(hip64, hip_name)
        old = _resolved(hip52, hip_name) if hip52 is not None else None
        in_52 = ("-" if hip52 is None or old is None or ours is None else
                 "same" if compare(ours, old, renames) == "same" else "differs")
        out.append([name, hip_name, library, verdict, note or "-", in_52,
                    ", ".join(p.spelled for p in ours) if ours is not None else "-",
                    ", ".join(p.spelled for p in theirs) if theirs is not None else "-"])
    return out


def render(rows: list[list[str]]) -> str:
    same = sum(row[3] == "same" for row in rows)
    lines = [
        "# rocmigrate: library functions HIPIFY's tables call unsupported whose HIP spelling ROCm",
        "# 6.4 declares, their parameter lists compared (libclang: CUDA 13's headers, ROCm 6.4's",
        "# and Debian's HIP 5.2.3 / hipSPARSE 5.3). Written by scripts/compare_api_signatures.py",
        "# (do not edit: re-run it); scripts/gen_api_tables.py renames the rows whose verdict is",
        "# `same` (from 5.2.0 where in_5.2 is `same`, else 6.4.0); the others stay unsupported.",
        "# verdict: same = as many parameters, each of the CUDA type renamed to HIP through the",
        "#   API tables or of the same type once typedefs are resolved; differs: the first one.",
        "# other_names: the other HIP names tried (for hipBLAS's 64-bit functions, the name the",
        "#   tables give the 32-bit twin, with _64) and why they differ.",
        "# in_5.2: the HIP 5.2.3 tree (HIP runtime, hipSPARSE) declares it the same way (same),",
        "#   otherwise (differs), or not (-).",
        f"# rows: {len(rows)}; same: {same}; differs: {len(rows) - same}",
        "\t".join(COLUMNS),
    ]
    lines += ["\t".join(row) for row in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuda", type=Path, action="append", required=True,
                        help="a folder of CUDA 13 headers (repeat it)")
    parser.add_argument("--hip64", type=Path, required=True,
                        help="ROCm 6.4 include folder (../shared/data/hip-6.4/include)")
    parser.add_argument("--hip52", type=Path, help="Debian 12's /usr/include (HIP 5.2.3)")
    parser.add_argument("--source", type=Path, default=gen_api_tables.DEFAULT_SOURCE,
                        help="the folder of HIPIFY's tables (gen_api_tables.py's --source)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true",
                        help="compare with --out instead of writing it (exit 1 when it differs)")
    options = parser.parse_args(argv)
    resource_dir = find_resource_dir()
    if resource_dir is None:
        print("error: no clang builtin headers found (set ROCMIGRATE_CLANG_RESOURCE_DIR)",
              file=sys.stderr)
        return 2
    from migrator.apitables import ApiTables

    renames = {entry.cuda: entry.hip for entry in ApiTables(gen_api_tables.DEFAULT_OUT)
               .names.values() if entry.hip and entry.kind == "type"}
    try:
        rows = candidates(options.source, options.hip64)
        cuda = cuda_declarations(options.cuda, resource_dir, {row[2] for row in rows})
        hip64 = hip_declarations(options.hip64.resolve(), tuple(sorted(set(HIP_HEADERS.values()))),
                                 resource_dir)
        hip52 = (hip_declarations(options.hip52.resolve(), HIP52_HEADERS, resource_dir,
                                  HIP52_FOLDERS) if options.hip52 else None)
    except (SetupError, OSError, gen_api_tables.SourceError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    text = render(evidence(rows, cuda, hip64, hip52, renames))
    return gen_api_tables.write_evidence(options.out, text, options.check)


if __name__ == "__main__":
    sys.exit(main())
