"""The CUDA->HIP API tables in rules/api: generated ones match their generator, all are well formed,
and a few real rows say what they should."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require, require_path

REPO_ROOT = Path(__file__).resolve().parent.parent
API_DIR = REPO_ROOT / "rules" / "api"
GENERATOR = REPO_ROOT / "scripts" / "gen_api_tables.py"
SOURCE = REPO_ROOT.parent / "shared" / "data"
HIP_INCLUDE = Path("/usr/include/hip")

LIBRARIES = ("runtime", "driver", "device", "complex", "rtc", "cublas", "curand", "cufft",
             "cusparse", "cusolver", "cub", "cudnn")
GENERATED = tuple(f"{lib}.tsv" for lib in LIBRARIES)
# the library choices (--roc, --dnn miopen): generated name tables and a hand-written header map
VARIANTS = {"roc": ("cublas", "curand", "cusparse", "cusolver"), "miopen": ("cudnn",)}
VARIANT_LIBRARIES = ("rocblas", "rocrand", "rocsparse", "rocsolver", "miopen")
VARIANT_GENERATED = tuple(f"{variant}/{lib}.tsv" for variant, libs in VARIANTS.items()
                          for lib in libs)

API_HEADER = ("cuda\thip\tkind\tlibrary\tsection\tcuda_added\tcuda_deprecated\tcuda_removed\t"
              "hip_added\thip_deprecated\thip_removed\texperimental\tsignature\tstatus")
HEADERS_HEADER = "cuda_header\thip_header\tlibrary\thip_added\tnote"
REWRITES_HEADER = "cuda\targ\taction\tvalue\tbelow\tnote"
LOWERINGS_HEADER = "cuda\tbelow\trule\tkind\treplacement\tdrop_argument\texact\tnote"
KNOWN_HEADERS = {name: API_HEADER for name in GENERATED + ("manual.tsv",)}
KNOWN_HEADERS["headers.tsv"] = HEADERS_HEADER
KNOWN_HEADERS["argument_rewrites.tsv"] = REWRITES_HEADER
KNOWN_HEADERS["lowerings.tsv"] = LOWERINGS_HEADER
KNOWN_HEADERS["header_guards.tsv"] = "cuda_macro\tcuda_header\thip_header\thip_macro\tnote"

VERSION = re.compile(r"\d+\.\d+(\.\d+)?")
VERSION_COLUMNS = ("cuda_added", "cuda_deprecated", "cuda_removed", "hip_added",
                   "hip_deprecated", "hip_removed")
REWRITE_ACTIONS = {"wrap_symbol", "cast", "append_argument", "append_argument_of",
                   "insert_argument", "remove_argument", "rename", "mark", "disambiguate",
                   "fold_into", "mark_attribute", "replace_value"}
ATTRIBUTE_ACTIONS = ("fold_into", "mark_attribute")


def _lines(path: Path) -> list[str]:
    """Non-comment, non-blank lines (the loader skips '#' lines)."""
    text = path.read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line.strip() and not line.startswith("#")]


def _table(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    lines = _lines(path)
    columns = lines[0].split("\t")
    rows = []
    for lineno, line in enumerate(lines[1:], 2):
        cells = line.split("\t")
        assert len(cells) == len(columns), f"{path.name}: row {lineno} has {len(cells)} cells: {line!r}"
        rows.append(dict(zip(columns, cells)))
    return columns, rows


def _tsv_files() -> list[Path]:
    return sorted(API_DIR.glob("*.tsv"))


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _names(*files: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name in files:
        for row in _table(API_DIR / name)[1]:
            out.setdefault(row["cuda"], row)
    return out


# ---- the generated tables cannot drift from their generator ----

def test_generator_reproduces_committed_tables(tmp_path):
    require_path(SOURCE / "hipify-api-tables", "HIPIFY's tables (../shared/data)")
    result = subprocess.run(
        [sys.executable, str(GENERATOR), "--source", str(SOURCE), "--out", str(tmp_path), "-q"],
        capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "ARGUMENTS_DIFFER" not in result.stderr  # each hand-marked name is in a ROC table
    produced = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.tsv"))
    assert produced == sorted(GENERATED + VARIANT_GENERATED)
    for name in GENERATED + VARIANT_GENERATED:
        committed = (API_DIR / name).read_bytes()
        fresh = (tmp_path / name).read_bytes()
        assert fresh == committed, f"rules/api/{name} differs from scripts/gen_api_tables.py output"


def test_generator_defaults_point_inside_repo():
    sys.path.insert(0, str(GENERATOR.parent))
    try:
        import gen_api_tables
    finally:
        sys.path.pop(0)
    assert gen_api_tables.DEFAULT_OUT == API_DIR
    assert gen_api_tables.DEFAULT_SOURCE == SOURCE


# ---- every table is well formed ----

def test_all_expected_files_present():
    for name in KNOWN_HEADERS:
        assert (API_DIR / name).is_file(), f"rules/api/{name} missing"


@pytest.mark.parametrize("path", _tsv_files(), ids=lambda p: p.name)
def test_tsv_header_and_shape(path):
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and b"\r" not in raw, f"{path.name}: want '\\n' line endings"
    raw.decode("utf-8")
    lines = _lines(path)
    assert lines, f"{path.name} is empty"
    if path.name in KNOWN_HEADERS:
        assert lines[0] == KNOWN_HEADERS[path.name]
    if path.name in GENERATED:
        # generated files have no comments: the header is the very first line
        assert raw.split(b"\n", 1)[0].decode() == API_HEADER
    _table(path)  # every row has as many cells as the header


@pytest.mark.parametrize("name", GENERATED + VARIANT_GENERATED + ("manual.tsv", "roc/manual.tsv"))
def test_api_table_rows(name):
    _, rows = _table(API_DIR / name)
    assert rows
    seen: set[str] = set()
    for row in rows:
        cuda = row["cuda"]
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:]*", cuda), cuda
        assert cuda not in seen, f"{name}: duplicate CUDA name {cuda}"
        seen.add(cuda)
        for column in VERSION_COLUMNS:
            assert row[column] == "" or VERSION.fullmatch(row[column]), (cuda, column, row[column])
        assert row["kind"] in ("type", "function", "device_function", "namespace"), (cuda, row["kind"])
        assert row["library"] in LIBRARIES + VARIANT_LIBRARIES, (cuda, row["library"])
        assert row["experimental"] in ("", "1"), cuda
        assert row["signature"] in ("identical", "differs"), cuda
        assert row["section"], cuda
        if row["library"] == "cudnn":
            assert row["status"] == "report_only", cuda
        elif name in VARIANT_GENERATED and row["hip"] and row["signature"] == "differs":
            assert row["status"] == "arguments_differ", cuda  # marked, not renamed
        else:
            assert row["status"] == ("supported" if row["hip"] else "unsupported"), cuda
        if name in GENERATED:
            assert row["library"] == name[:-4], cuda
        if name in VARIANT_GENERATED:
            assert row["library"] in VARIANT_LIBRARIES, cuda
    if name in GENERATED + VARIANT_GENERATED:
        assert [r["cuda"] for r in rows] == sorted(seen), f"{name} is not sorted by CUDA name"


@pytest.mark.parametrize("name", ["headers.tsv", *(f"{v}/headers.tsv" for v in VARIANTS)])
def test_headers_table_rows(name):
    _, rows = _table(API_DIR / name)
    seen: set[str] = set()
    for row in rows:
        header = row["cuda_header"]
        assert header and header not in seen, f"duplicate or empty cuda_header {header!r}"
        seen.add(header)
        assert "*" not in header or header.endswith("/*"), header
        assert "*" not in row["hip_header"], header
        assert row["hip_added"] == "" or VERSION.fullmatch(row["hip_added"]), header
        assert row["library"], header
        if row["hip_header"] == "-":
            assert row["note"], f"{header}: a '-' (no equivalent) row needs a note"
    assert not any(h.startswith("thrust/") for h in seen), "rocThrust keeps thrust/ paths"


def test_argument_rewrites_rows():
    _, rows = _table(API_DIR / "argument_rewrites.tsv")
    names = _names("manual.tsv", *GENERATED)  # (a manual row overrides the generated one)
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        key = (row["cuda"], row["arg"], row["action"], row["action"] in ATTRIBUTE_ACTIONS
               and row["value"].split()[0])  # (one row per attribute)
        assert key not in seen, f"duplicate rewrite {key}"
        seen.add(key)
        assert row["action"] in REWRITE_ACTIONS, row
        assert re.fullmatch(r"\d+", row["arg"]), row
        assert row["action"] == "remove_argument" or row["value"], row
        assert row["below"] == "" or VERSION.fullmatch(row["below"]), row
        entry = names.get(row["cuda"])
        assert entry is not None and entry["status"] == "supported", row["cuda"]
        # rename and mark call another HIP function or none; disambiguate casts for HIP's extra
        # overloads of a function whose parameters are CUDA's; the attribute actions are for
        # attribute values the HIP function lacks
        # replace_value gives a value CUDA accepts through a C++ overload of the same function
        if row["action"] not in ("rename", "mark", "disambiguate", "replace_value",
                                 *ATTRIBUTE_ACTIONS):
            assert entry["signature"] == "differs", row["cuda"]
        if row["action"] == "rename":  # ARG001 looks for these calls by their comma
            assert int(row["arg"]) >= 2, row


# ---- real rows ----

def _row(name: str, cuda: str) -> dict[str, str]:
    rows = {r["cuda"]: r for r in _table(API_DIR / name)[1]}
    assert cuda in rows, f"{cuda} not in {name}"
    return rows[cuda]


def test_spot_checks():
    row = _row("runtime.tsv", "cudaMalloc")
    assert (row["hip"], row["status"], row["kind"]) == ("hipMalloc", "supported", "function")
    assert _row("runtime.tsv", "cudaStream_t")["kind"] == "type"
    assert _row("runtime.tsv", "cudaMemcpyHostToDevice")["hip"] == "hipMemcpyHostToDevice"
    assert _row("runtime.tsv", "cudaMemcpyToSymbol")["signature"] == "differs"
    assert _row("runtime.tsv", "cudaMemcpy")["signature"] == "identical"
    assert _row("cublas.tsv", "cublasSgemm")["hip"] == "hipblasSgemm"
    assert _row("curand.tsv", "curand_uniform")["hip"] == "hiprand_uniform"
    assert _row("cusparse.tsv", "cusparseCreate")["hip"] == "hipsparseCreate"
    assert _row("cufft.tsv", "cufftExecC2C")["hip"] == "hipfftExecC2C"
    assert _row("complex.tsv", "cuCaddf")["hip"] == "hipCaddf"
    assert _row("rtc.tsv", "nvrtcCreateProgram")["hip"] == "hiprtcCreateProgram"
    assert _row("device.tsv", "__syncthreads")["kind"] == "device_function"
    cudnn = _row("cudnn.tsv", "cudnnCreate")
    assert (cudnn["hip"], cudnn["status"]) == ("miopenCreate", "report_only")
    assert _row("cudnn.tsv", "cudnnConvolutionForward")["signature"] == "differs"
    # hipSPARSE keeps cuSPARSE's arguments: HIPIFY's rewrites for these are rocSPARSE-only
    assert _row("cusparse.tsv", "cusparseSpMV")["signature"] == "identical"
    shfl = _row("manual.tsv", "__shfl_down_sync")
    assert (shfl["hip"], shfl["hip_added"], shfl["kind"]) == ("__shfl_down_sync", "6.2.0",
                                                                "device_function")
    headers = {r["cuda_header"]: r for r in _table(API_DIR / "headers.tsv")[1]}
    assert headers["cuda_runtime.h"]["hip_header"] == "hip/hip_runtime.h"
    assert headers["device_launch_parameters.h"]["hip_header"] == ""
    assert headers["mma.h"]["hip_header"] == "rocwmma/rocwmma.hpp"
    rewrites = {(r["cuda"], r["action"]): r for r in _table(API_DIR / "argument_rewrites.tsv")[1]}
    assert rewrites[("cudaMemcpyFromSymbol", "wrap_symbol")]["arg"] == "1"
    assert rewrites[("cudaLaunchKernel", "cast")]["value"] == "reinterpret_cast<const void*>"


# ---- hand-written rows against the real HIP headers (where installed) ----

def _hip_tokens(root: Path, pattern: str = "*.h") -> set[str]:
    tokens: set[str] = set()
    for path in root.rglob(pattern):
        if "nvidia_detail" in path.parts or "nvcc_detail" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        tokens.update(re.findall(r"[A-Za-z_]\w*", text))
    return tokens


def _hip_version(include: Path) -> tuple[int, int]:
    """The HIP release (major, minor) whose headers are under ``include``: its
    ``hip/hip_version.h`` (HIP_VERSION_PATCH is a build number, not the release's third part)."""
    text = (include / "hip" / "hip_version.h").read_text(encoding="utf-8", errors="replace")
    parts = [re.search(rf"#define HIP_VERSION_{part} (\d+)", text) for part in ("MAJOR", "MINOR")]
    assert all(parts), f"{include}: no HIP version"
    return int(parts[0].group(1)), int(parts[1].group(1))


def _release(text: str) -> tuple[int, int]:
    """A table's version ("6.2.0") as the (major, minor) a header tree is known by."""
    return _version_tuple(text)[:2]


HIP_TREES = {"installed": HIP_INCLUDE.parent, "6.4": SOURCE / "hip-6.4" / "include"}


@pytest.fixture(params=sorted(HIP_TREES), scope="module")
def hip_tree(request) -> tuple[Path, tuple[int, int], set[str]]:
    """(include folder, HIP version, identifiers declared) of a real HIP header tree: Debian's
    (hipcc's HIP 5.2 on Debian 12) and HIP 6.4.3 beside the checkout. Required in CI."""
    from migrator.clang import find_resource_dir

    include = HIP_TREES[request.param]
    require_path(include / "hip" / "hip_version.h", f"the {request.param} HIP headers")
    # hip_runtime.h also declares what clang's own HIP headers do (__clang_hip_math.h: __isnanf
    # & co.): those of the clang that compiles against the tree (hipcc's; libclang's for 6.4)
    resource = find_resource_dir()
    require(resource is not None, "clang's builtin HIP headers (see migrator/clang)")
    return include, _hip_version(include), _hip_tokens(include / "hip") | _hip_tokens(
        resource / "include", "__clang_hip_*.h")


def test_manual_rows_against_real_hip_headers(hip_tree):
    """A hand-written row's HIP name is declared exactly from the release it says it was added
    in (and until the one it says it was removed in)."""
    include, version, tokens = hip_tree
    for row in _table(API_DIR / "manual.tsv")[1]:
        if not row["hip"] or not row["hip_added"]:
            continue
        exists = _release(row["hip_added"]) <= version and not (
            row["hip_removed"] and _release(row["hip_removed"]) <= version)
        assert (row["hip"] in tokens) == exists, (
            f"{row['cuda']}: {row['hip']} (added {row['hip_added']}) "
            f"{'missing from' if exists else 'already in'} HIP {version}")


def test_verified_header_paths_exist(hip_tree):
    include, version, _ = hip_tree
    for row in _table(API_DIR / "headers.tsv")[1]:
        hip = row["hip_header"]
        if hip in ("", "-") or "verified in" not in row["note"]:
            continue
        if row["hip_added"] and _release(row["hip_added"]) > version:
            continue
        if not (include / hip).parent.is_dir() and include != HIP_TREES["installed"]:
            continue  # the 6.4 tree holds HIP's own headers, not hipRAND's or hipBLAS's
        assert (include / hip).is_file(), f"{row['cuda_header']}: <{hip}> missing in {version}"


def test_lowerings_end_where_hip_has_the_cuda_api():
    """Each lowering applies exactly below the ROCm release whose HIP has the CUDA name (or
    header), so that API001 / HDR001 take over from there, or at every target where no release
    has it ("-"), and names a rule that exists."""
    from migrator import registry
    from migrator.apitables import LOWERING_EXACT, LOWERING_KINDS, load
    from migrator.versions import parse_version

    tables = load()
    codes = {code for cls in registry.all_rules() for code in cls.codes()}
    _, rows = _table(API_DIR / "lowerings.tsv")
    for row in rows:
        assert row["kind"] in LOWERING_KINDS and row["exact"] in LOWERING_EXACT, row["cuda"]
        assert row["rule"] in codes, row["cuda"]
        entry = (tables.headers if row["kind"] == "header" else tables.names)[row["cuda"]]
        if row["below"] == "-":  # lowered at every target: no release the tables know has it
            assert entry.hip_added is None and not entry.hip, row["cuda"]
            continue
        assert entry.hip_added == parse_version(row["below"]), row["cuda"]


def test_lowerings_target_what_hip_has(hip_tree):
    """What a lowering writes exists in real HIP headers: in the releases below the one where
    the CUDA name takes over (HIP 5.2), and still in later ones (6.4); a header in double
    quotes is one of rocmigrate's support headers."""
    from migrator import support

    include, _, tokens = hip_tree
    for row in _table(API_DIR / "lowerings.tsv")[1]:
        replacement = row["replacement"]
        if row["kind"] == "header" and replacement.startswith('"'):
            assert replacement.strip('"') in support.available(), replacement
            continue
        if row["kind"] == "header":
            assert (include / replacement).is_file(), replacement
            continue
        for name in re.findall(r"[A-Za-z_]\w*", replacement):
            if name in ("static_cast", "float") or name.startswith("__builtin_"):
                continue  # the language and the compiler's builtins
            assert name in tokens, f"{row['cuda']}: {name} not declared in {include}"


# ---- the generator on a small synthetic source (runs without ../shared) ----

_TABLE_HEAD = ("|**CUDA**|**A**|**D**|**C**|**R**|**{target}**|**A**|**D**|**C**|**R**|**E**|\n"
               "|:--|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|\n")


def _synthetic_source(root: Path) -> Path:
    sys.path.insert(0, str(GENERATOR.parent))
    try:
        import gen_api_tables
    finally:
        sys.path.pop(0)
    tables = root / "hipify-api-tables"
    tables.mkdir(parents=True)
    for library, (filename, target) in gen_api_tables.LIBRARIES.items():
        text = f"# {library}\n\n## **1. Device Functions**\n\n" + _TABLE_HEAD.format(target=target)
        text += f"|`{library}Zeta`| | | | | | | | | | |\n"
        text += f"|`{library}Alpha`|9.0|10.0| |12.0|`hip{library}Alpha`|1.6.0| | | |6.3.0|\n"
        text += "\n## **2. Data types**\n\n" + _TABLE_HEAD.format(target=target)
        text += f"|`{library}Zeta`| | | | |`hip{library}Zeta`|5.0| | | | |\n"
        text += f"|`{library}Alpha`| | | | |`other{library}Alpha`|2.0| | | | |\n"
        text += f"|`{library}Rewritten`| | | | |`hip{library}Rewritten`|2.0| | | | |\n"
        (tables / filename).write_text(text + "\n\\*A - Added\n", encoding="utf-8")
    for libraries in gen_api_tables.VARIANTS.values():
        for library, (filename, target, _) in libraries.items():
            if (tables / filename).exists():
                continue  # cuDNN's MIOpen table: the default one is renamed with --dnn miopen
            text = f"# {library}\n\n## **1. Functions**\n\n" + _TABLE_HEAD.format(target=target)
            text += f"|`{library}Zeta`| | | | | | | | | | |\n"
            text += f"|`{library}Alpha`| | | | |`roc_{library}_alpha`|3.5.0| | | | |\n"
            text += f"|`{library}Rewritten`| | | | |`roc_{library}_rewritten`|3.5.0| | | | |\n"
            (tables / filename).write_text(text + "\n\\*A - Added\n", encoding="utf-8")
    rewrites = "# comment\n" + "".join(f"{lib}Rewritten\targ0:reinterpret_cast\n"
                                       for lib in gen_api_tables.LIBRARIES)
    (root / "hipify-argument-rewrites.tsv").write_text(rewrites, encoding="utf-8")
    return root


def test_generator_on_synthetic_source(tmp_path):
    source = _synthetic_source(tmp_path / "src")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, str(GENERATOR), "--source", str(source),
                             "--out", str(out), "-q"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    # conflicting HIP names for a CUDA name: the first is kept, with a warning
    assert "runtimeAlpha" in result.stderr and "warning" in result.stderr
    for library in LIBRARIES:
        lines = (out / f"{library}.tsv").read_text(encoding="utf-8").split("\n")
        assert lines[0] == API_HEADER and lines[-1] == ""
        rows = {line.split("\t")[0]: line.split("\t") for line in lines[1:-1]}
        assert list(rows) == sorted(rows)  # sorted, one row per CUDA name
        alpha = rows[f"{library}Alpha"]
        zeta = rows[f"{library}Zeta"]
        rewritten = rows[f"{library}Rewritten"]
        kind = "device_function" if library == "device" else "function"
        status = "report_only" if library == "cudnn" else "supported"
        assert alpha == [f"{library}Alpha", f"hip{library}Alpha", kind, library, "Device Functions",
                         "9.0", "10.0", "12.0", "1.6.0", "", "", "1", "identical", status]
        # an unsupported row is replaced by a later row that has a HIP name
        assert zeta[1] == f"hip{library}Zeta" and zeta[2] == "type" and zeta[4] == "Data types"
        signature = "identical" if library == "cusparse" else "differs"
        assert rewritten[12] == signature
    # the library choices: the ROC name, or none, or marked where the arguments differ (for
    # cuSPARSE too: HIPIFY's cuSPARSE rewrites are rocSPARSE's)
    for variant, libraries in gen_api_tables_module().VARIANTS.items():
        for library, (_, _, label) in libraries.items():
            text = (out / variant / f"{library}.tsv").read_text(encoding="utf-8")
            rows = {line.split("\t")[0]: line.split("\t") for line in text.split("\n")[1:-1]}
            assert list(rows) == sorted(rows)
            alpha, zeta = rows[f"{library}Alpha"], rows[f"{library}Zeta"]
            if library == "cudnn":  # the default table's rows, supported instead of report_only
                assert alpha[1:4] == ["hipcudnnAlpha", "function", label]
                assert zeta[1] == "hipcudnnZeta" and zeta[13] == "supported"
            else:
                assert alpha[1:4] == [f"roc_{library}_alpha", "function", label]
                assert alpha[8] == "3.5.0"
                assert zeta[1] == "" and zeta[13] == "unsupported"
            assert alpha[12:] == ["identical", "supported"]
            assert rows[f"{library}Rewritten"][12:] == ["differs", "arguments_differ"]
    assert "ARGUMENTS_DIFFER names no ROC/MIOpen function" in result.stderr


def test_generator_rejects_malformed_rows(tmp_path):
    source = _synthetic_source(tmp_path / "src")
    broken = source / "hipify-api-tables" / "CUFFT_API_supported_by_HIP.md"
    text = broken.read_text(encoding="utf-8")
    text = text.replace("\n\n\\*A", "\n|`cufftBad`|x.y| | | | | | | | | |\n\n\\*A")
    broken.write_text(text, encoding="utf-8")
    result = subprocess.run([sys.executable, str(GENERATOR), "--source", str(source),
                             "--out", str(tmp_path / "out"), "-q"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "bad version 'x.y'" in result.stderr


def _names_read_by_dict_rows(api_dir: Path) -> dict:
    """The name tables as the loader read them before it split rows into cell lists: a dict per
    row, the NamedTuple's constructor (the reference for the faster reading)."""
    from migrator.apitables import ApiEntry, _version

    names = {}
    special = {"headers.tsv", "header_guards.tsv", "argument_rewrites.tsv", "lowerings.tsv",
               "manual.tsv"}
    paths = sorted(p for p in api_dir.glob("*.tsv") if p.name not in special)
    for path in paths + [api_dir / "manual.tsv"]:
        with path.open(encoding="utf-8", newline="") as handle:
            lines = [line.rstrip("\r\n") for line in handle
                     if line.strip() and not line.startswith("#")]
        header = lines[0].split("\t")
        for line in lines[1:]:
            row = dict(zip(header, line.split("\t")))
            cuda = row["cuda"]
            if path.name != "manual.tsv" and cuda in names and names[cuda].status == "supported":
                continue
            names[cuda] = ApiEntry(cuda, row["hip"], row["kind"], row["library"],
                                   _version(row["hip_added"]), _version(row["hip_removed"]),
                                   row["signature"] or "identical", row["status"],
                                   row.get("experimental") == "1")
    return names


def test_loader_reads_the_tables_as_dict_rows_did(tmp_path):
    from migrator.apitables import ApiEntry, load

    assert load.__wrapped__(API_DIR).names == _names_read_by_dict_rows(API_DIR)
    # CRLF and lone CR line ends, comments, blank lines, no experimental column, columns in
    # another order, a name that a later table may not override
    (tmp_path / "a.tsv").write_bytes(
        b"# comment\r\nhip\tcuda\tkind\tlibrary\thip_added\thip_removed\tsignature\tstatus\r\n"
        b"\r\nhipA\tcuA\tfunction\truntime\t 5.2 \t\t\tsupported\rhipB\tcuB\ttype\truntime\t"
        b"\t6.0\tdiffers\tunsupported\n")
    (tmp_path / "b.tsv").write_text(
        API_HEADER + "\ncuA\thipX\tfunction\tdriver\t\t\t\t\t\t\t\t1\t\tsupported\n"
        "cuB\thipY\tfunction\tdriver\t\t\t\t\t1.5\t\t\t1\t\tsupported\n")
    (tmp_path / "manual.tsv").write_text(API_HEADER + "\n")
    names = load.__wrapped__(tmp_path).names
    assert names == _names_read_by_dict_rows(tmp_path)
    assert names["cuA"] == ApiEntry("cuA", "hipA", "function", "runtime", (5, 2, 0), None,
                                    "identical", "supported")
    assert names["cuB"].hip == "hipY" and names["cuB"].experimental
    assert type(names["cuB"]) is ApiEntry


def test_loader_rejects_a_row_of_another_width(tmp_path):
    from migrator.apitables import load

    (tmp_path / "a.tsv").write_text(API_HEADER + "\ncuA\thipA\n")
    with pytest.raises(ValueError, match="a.tsv: row 2 has 2 cells, expected 14"):
        load.__wrapped__(tmp_path)


# ---- the library choices (--roc, --dnn miopen) against the real headers ----

_PROTOTYPE = re.compile(r"\b([A-Za-z_]\w*)\s*\(([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*)\)\s*"
                        r"(?:;|\{|__attribute__|[A-Z_]+\b)")


def _prototypes(folder: Path) -> dict[str, list[str]]:
    """Function name -> its parameters (as written) for the headers of ``folder``: enough of C to
    compare a library's prototypes with another's."""
    found: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.h")):
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)
        for match in _PROTOTYPE.finditer(text):
            parameters, depth, current = [], 0, ""
            for char in match.group(2):
                depth += char in "(<[" and 1 or -(char in ")>]")
                if char == "," and depth == 0:
                    parameters.append(current.strip())
                    current = ""
                else:
                    current += char
            if current.strip() not in ("", "void"):
                parameters.append(current.strip())
            found.setdefault(match.group(1), parameters)
    return found


@pytest.mark.parametrize("library, hip_folder, roc_folder", [
    ("cusparse", "hipsparse", "rocsparse"), ("curand", "hiprand", "rocrand")])
def test_roc_renames_only_calls_whose_arguments_match(library, hip_folder, roc_folder):
    """A --roc rename keeps the call's arguments, so the ROC function must take what the CUDA one
    does: as many parameters (hipSPARSE and hipRAND keep cuSPARSE's and cuRAND's lists), and no
    data type (CUDA_R_32F & co. become rocBLAS's rocblas_datatype, not rocsparse_datatype).
    Every function of the ROC table that both Debian libraries declare is checked; the others
    are marked (arguments_differ), never renamed."""
    hip = _prototypes(require_path(Path("/usr/include") / hip_folder, f"Debian's {hip_folder}"))
    roc = _prototypes(require_path(Path("/usr/include") / roc_folder, f"Debian's {roc_folder}"))
    hip_names = {row["cuda"]: row["hip"] for row in _table(API_DIR / f"{library}.tsv")[1]}
    checked = 0
    for row in _table(API_DIR / "roc" / f"{library}.tsv")[1]:
        hip_name = hip_names.get(row["cuda"])
        if row["status"] != "supported" or hip_name not in hip or row["hip"] not in roc:
            continue
        checked += 1
        assert len(roc[row["hip"]]) == len(hip[hip_name]), (
            f"{row['cuda']}: {row['hip']} takes {len(roc[row['hip']])} parameters, "
            f"{hip_name} {len(hip[hip_name])}: mark it (ARGUMENTS_DIFFER)")
        assert not any(re.search(r"\bhipDataType\b", p) for p in hip[hip_name]), row["cuda"]
    assert checked > (250 if library == "cusparse" else 30)  # the check is not vacuous


def test_verified_roc_header_paths_exist():
    for variant in VARIANTS:
        for row in _table(API_DIR / variant / "headers.tsv")[1]:
            if "verified" in row["note"] and "unverified" not in row["note"]:
                path = Path("/usr/include") / row["hip_header"]
                assert require_path(path.parent, "a ROC library's headers") and path.is_file(), row


def test_the_library_choices_replace_the_default_rows(tmp_path):
    """rules/api/<variant>/ tables replace the default rows for their CUDA names (names and
    headers), only when the variant is asked for; an unknown variant is an error."""
    from migrator.apitables import ApiTables

    default, roc = ApiTables(API_DIR), ApiTables(API_DIR, ("roc",))
    assert default.names["cublasSgemm_v2"].hip == "hipblasSgemm"
    assert roc.names["cublasSgemm_v2"][:2] == ("cublasSgemm_v2", "rocblas_sgemm")
    assert roc.names["cusparseSpMV"].status == "arguments_differ"
    assert roc.names["cufftPlan1d"] == default.names["cufftPlan1d"]  # no rocFFT table
    assert roc.names["cudnnCreate"].status == "report_only"
    assert roc.headers["cublas_v2.h"].hip_header == "rocblas/rocblas.h"
    # roc/manual.tsv corrects HIPIFY's swapped cuSPARSE orders (rocsparse-types.h: row = 0)
    assert roc.names["CUSPARSE_ORDER_ROW"].hip == "rocsparse_order_row"
    assert roc.names["CUSPARSE_ORDER_COL"].hip == "rocsparse_order_column"
    assert default.headers["cublas_v2.h"].hip_header == "hipblas/hipblas.h"
    miopen = ApiTables(API_DIR, ("miopen",))
    assert miopen.names["cudnnCreate"][1:] == ("miopenCreate", "function", "miopen",
                                               (2, 1, 0), None, "identical", "supported", False)
    assert "cudnn" not in miopen.report_only_libraries and "cudnn" in default.report_only_libraries
    with pytest.raises(ValueError, match="no API tables for 'hipster'"):
        ApiTables(API_DIR, ("hipster",))


def test_no_roc_name_means_the_opposite():
    """HIPIFY's ROC table swapped cuSPARSE's row and column orders (corrected in roc/manual.tsv):
    no renamed name says row where CUDA's says column, upper for lower, left for right..."""
    from migrator.apitables import ApiTables

    opposites = {"ROW": "COL", "COL": "ROW", "UPPER": "LOWER", "LOWER": "UPPER", "LEFT": "RIGHT",
                 "RIGHT": "LEFT", "HOST": "DEVICE", "DEVICE": "HOST", "ZERO": "ONE", "ONE": "ZERO"}
    for entry in ApiTables(API_DIR, tuple(VARIANTS)).names.values():
        cuda = set(entry.cuda.upper().split("_"))
        target = set(entry.hip.upper().replace("COLUMN", "COL").split("_"))
        assert not any(opposites.get(word) in target and word not in target for word in cuda), (
            entry.cuda, entry.hip)


def test_rocblas_complex_and_half_functions_are_told_by_their_real_twin():
    from migrator.apitables import ApiTables

    functions = {"rocblas_sgemm", "rocblas_cgemm", "rocblas_zgemm_64", "rocblas_hgemm",
                 "rocblas_sdot", "rocblas_cdotc", "rocblas_ssyrk", "rocblas_cherk_64",
                 "rocblas_isamax", "rocblas_icamax", "rocblas_snrm2", "rocblas_scnrm2",
                 "rocblas_sscal", "rocblas_csscal", "rocblas_sgemv_batched",
                 "rocblas_hshgemv_batched", "rocblas_create_handle", "rocblas_scopy",
                 "rocblas_scal_ex", "rocblas_dgemm"}
    typed = gen_api_tables_module().rocblas_typed_functions(functions)
    assert typed == {"rocblas_cgemm", "rocblas_zgemm_64", "rocblas_hgemm", "rocblas_cdotc",
                     "rocblas_cherk_64", "rocblas_icamax", "rocblas_scnrm2", "rocblas_csscal",
                     "rocblas_hshgemv_batched"}
    names = ApiTables(API_DIR, ("roc",)).names
    assert names["cublasCgemm_v2"].status == names["cublasHgemm"].status == "arguments_differ"
    assert names["cublasScopy_v2"].status == names["cublasCreate_v2"].status == "supported"


def gen_api_tables_module():
    sys.path.insert(0, str(GENERATOR.parent))
    try:
        import gen_api_tables
    finally:
        sys.path.pop(0)
    return gen_api_tables


_DECLARATION_OF = r"\b{name}\s*\(([^;{{}}()]*(?:\([^()]*\)[^;{{}}()]*)*)\)\s*(?:[;{{]|noexcept|__attribute__|const)"


@functools.lru_cache(maxsize=2)
def _header_texts(include: Path) -> tuple[str, ...]:
    """The headers of a tree, comments blanked."""
    return tuple(re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(encoding="utf-8",
                                                                  errors="replace"), flags=re.S)
                 for path in sorted(include.rglob("*.h")))


def _parameter_counts(include: Path, name: str) -> set[int]:
    """How many parameters the declarations of ``name`` in a header tree take (each overload)."""
    pattern = re.compile(_DECLARATION_OF.format(name=re.escape(name)))
    counts = set()
    for text in _header_texts(include):
        if name not in text:
            continue
        for found in pattern.finditer(text):
            params = found.group(1).strip()
            counts.add(0 if params in ("", "void") else params.count(",") + 1
                       - len(re.findall(r"<[^<>]*,[^<>]*>", params)))
    return counts


def test_argument_count_rows_match_the_rocm_6_4_headers():
    """Each argument_rewrites row that gives a call's arity (append an argument, call another
    HIP function) makes a call with as many arguments as a declaration of the HIP function in
    the ROCm 6.4 headers (HIP and its libraries) takes."""
    include = require_path(SOURCE / "hip-6.4" / "include", "the ROCm 6.4 headers")
    names, rows = _table(API_DIR / "argument_rewrites.tsv")
    tables = {row["cuda"]: row for path in API_DIR.glob("*.tsv")
              if path.name not in ("argument_rewrites.tsv", "headers.tsv", "header_guards.tsv",
                                   "lowerings.tsv")
              for row in _table(path)[1] if "hip" in row}
    rows = [row for row in rows if not row["below"] or _release(row["below"]) > (6, 4)]
    calls: dict[tuple[str, int], list[dict[str, str]]] = {}  # the rows of a call's arity
    for row in rows:
        if row["action"] in ("append_argument", "append_argument_of", "rename"):
            calls.setdefault((row["cuda"], int(row["arg"])), []).append(row)
    for (cuda, arity), found in calls.items():
        hip = next((row["value"] for row in found if row["action"] == "rename"),
                   tables[cuda]["hip"])
        every = [row for row in rows if row["cuda"] == cuda]  # (insert/remove: any arity)
        made = (arity + sum(row["action"] != "rename" for row in found)
                + sum(row["action"] == "insert_argument" and int(row["arg"]) <= arity
                      for row in every)
                - sum(row["action"] == "remove_argument" and int(row["arg"]) < arity
                      for row in every))
        counts = _parameter_counts(include, hip)
        assert counts, f"{cuda}: no declaration of {hip} in the ROCm 6.4 headers"
        assert made in counts, f"{cuda}: a call with {made} arguments; {hip} takes {counts}"
    assert len(calls) >= 5


SIGNATURE_EVIDENCE = REPO_ROOT / "docs" / "api_signature_evidence.tsv"


def test_functions_renamed_by_the_signature_evidence_take_cudas_arity_in_rocm_6_4():
    """The functions HIPIFY's tables give no HIP name whose HIP counterpart the generator
    renames them to (docs/api_signature_evidence.tsv, verdict ``same``: libclang found the same
    parameter types) take as many parameters in the ROCm 6.4 headers as in CUDA 13; the others
    stay unsupported, with the reason."""
    include = require_path(SOURCE / "hip-6.4" / "include", "the ROCm 6.4 headers")
    names = _names(*GENERATED)
    promoted = 0
    for row in _table(SIGNATURE_EVIDENCE)[1]:
        entry = names[row["cuda"]]
        if row["verdict"] != "same":
            assert row["verdict"].startswith("differs: "), row
            assert (entry["hip"], entry["status"]) == ("", "unsupported"), row["cuda"]
            continue
        promoted += 1
        assert (entry["hip"], entry["status"], entry["kind"]) == (
            row["hip"], "supported", "function"), row["cuda"]
        assert entry["hip_added"] == ("5.2.0" if row["in_5.2"] == "same" else "6.4.0")
        arity = len(row["cuda_parameters"].split(", ")) if row["cuda_parameters"] else 0
        counts = _parameter_counts(include, row["hip"])
        assert arity in counts, f"{row['cuda']}: {arity} parameters; {row['hip']} takes {counts}"
    assert promoted >= 50
