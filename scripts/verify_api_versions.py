#!/usr/bin/env python3
"""Check the HIP versions of the API tables (rules/api/*.tsv) against real HIP headers.

A table row renames a CUDA name to a HIP name from the ROCm release in its ``hip_added`` column
(until ``hip_removed``). This script asks libclang which names two real header trees declare and
compares: a name should be declared by a release iff the row says it exists there.

Header trees (read only here and by tests/test_api_versions.py, never at run time):
  --hip64 DIR  HIP 6.4.3 (../shared/data/hip-6.4/include: the HIP runtime only)
  --hip52 DIR  Debian 12's /usr/include: HIP 5.2.3 (hip/), hipRAND and hipSPARSE of ROCm 5.3.3
               (hiprand/, rocrand/, hipsparse/, rocsparse/)
Each tree is parsed as HIP for the AMD platform (migrator.clang's arguments: the tree only, with
clang's HIP wrapper), host and device sides, with and without HIP_ENABLE_WARP_SYNC_BUILTINS (the
one opt-in macro that declares more names in these trees). Declarations (functions, templates,
types, enumerators, variables at namespace scope, macros) count where they are written in the
library's own folders; clang's builtin HIP headers (math functions) count for the HIP runtime,
without a line number (it differs between clang releases). A name that clang does not declare but
that the headers spell (outside comments) is reported with that place ("text only": under an #if
that is false for HIP on AMD, a parameter, a member...).

Output (--out, default docs/api_version_evidence.tsv): one row per table row that has a HIP name
(the rows of manual.tsv, which override the generated tables, included), sorted by table and CUDA
name, with the verdict. Rows whose HIP library has no headers in either tree (hipBLAS, hipFFT,
hipSOLVER, hipCUB, MIOpen) are only counted, in the header. Deterministic output.

Usage: python3 scripts/verify_api_versions.py --hip64 ../shared/data/hip-6.4/include
       [--hip52 /usr/include] [--out FILE] [--check]
Needs the libclang wheel and clang's builtin headers (see migrator/clang/check.py).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

sys.path.insert(0, str(REPO_ROOT / "scripts"))

import gen_api_tables  # noqa: E402
from migrator.clang.check import clang_arguments, find_resource_dir  # noqa: E402

API_DIR = REPO_ROOT / "rules" / "api"
DEFAULT_OUT = REPO_ROOT / "docs" / "api_version_evidence.tsv"
NAME_TABLES = ("runtime", "driver", "device", "complex", "rtc", "cublas", "curand", "cufft",
               "cusparse", "cusolver", "cub", "cudnn", "manual")
OPT_IN_MACRO = "HIP_ENABLE_WARP_SYNC_BUILTINS"

# HIP library -> (folders under the include root that hold it, headers a program includes)
LIBRARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "HIP": (("hip",), ()),  # every hip/*.h, after hip/hip_runtime.h
    "hipRAND": (("hiprand", "rocrand"), ("hiprand/hiprand.h", "hiprand/hiprand_kernel.h",
                                         "hiprand/hiprand_mtgp32_host.h")),
    "hipSPARSE": (("hipsparse", "rocsparse"), ("hipsparse/hipsparse.h",)),
}
# the library a table's HIP names belong to (a name that the HIP runtime's headers declare,
# such as hipDataType in the cuBLAS table, belongs to HIP whatever its table)
TABLE_LIBRARY = {"runtime": "HIP", "driver": "HIP", "device": "HIP", "complex": "HIP",
                 "rtc": "HIP", "curand": "hipRAND", "cusparse": "hipSPARSE", "cublas": "hipBLAS",
                 "cufft": "hipFFT", "cusolver": "hipSOLVER", "cub": "hipCUB", "cudnn": "MIOpen"}
# The ROCm release of a library's headers, from the version they #define. The HIP runtime says it
# (hip_version.h); hipRAND and hipSPARSE carry their own numbers: these are Debian 12's
# libhiprand-dev 5.3.3 and libhipsparse-dev 5.3.3, built from ROCm 5.3.3's tarballs.
LIBRARY_RELEASES = {("hipRAND", "201009"): (5, 3), ("hipSPARSE", "2.3.2"): (5, 3),
                    ("hipRAND", "201200"): (6, 4), ("hipSPARSE", "3.2.0"): (6, 4)}
VERSION_MACROS = {
    "HIP": ("hip/hip_version.h",
            r"#define HIP_VERSION_MAJOR (\d+)\s+#define HIP_VERSION_MINOR (\d+)"),
    "hipRAND": ("hiprand/hiprand_version.h", r"#define HIPRAND_VERSION (\d+)"),
    "hipSPARSE": ("hipsparse/hipsparse-version.h",
                  r"#define hipsparseVersionMajor\s+(\d+)\s+#define hipsparseVersionMinor\s+(\d+)"
                  r"\s+#define hipsparseVersionPatch\s+(\d+)"),
}
COLUMNS = ("cuda", "hip", "table", "library", "hip_added", "hip_removed", "old_release", "in_old",
           "in_6.4", "where_old", "where_6.4", "verdict")
DECLARATION_KINDS = ("FUNCTION_DECL", "FUNCTION_TEMPLATE", "VAR_DECL", "TYPEDEF_DECL",
                     "TYPE_ALIAS_DECL", "TYPE_ALIAS_TEMPLATE_DECL", "STRUCT_DECL", "UNION_DECL",
                     "CLASS_DECL", "CLASS_TEMPLATE", "ENUM_DECL", "ENUM_CONSTANT_DECL", "NAMESPACE",
                     "MACRO_DEFINITION")
SCOPES = ("NAMESPACE", "LINKAGE_SPEC", "ENUM_DECL", "UNEXPOSED_DECL")  # searched inside


class SetupError(Exception):
    """A header tree that is not one (or does not parse): nothing could be checked."""


@dataclass
class Tree:
    """One header tree: which libraries it has (and their releases) and what they declare."""

    releases: dict[str, tuple[int, int]] = field(default_factory=dict)
    declared: dict[str, str] = field(default_factory=dict)  # name -> where (without the macro)
    opt_in: dict[str, str] = field(default_factory=dict)  # declared only with OPT_IN_MACRO
    spelled: dict[str, str] = field(default_factory=dict)  # identifier -> first place in the text

    def state(self, name: str, library: str) -> tuple[str, str]:
        """(declared?, where) of ``name`` in ``library``: yes / with-MACRO / no / not-checkable."""
        if library not in self.releases:
            return "not-checkable", ""
        for state, places in (("yes", self.declared), (f"with-{OPT_IN_MACRO}", self.opt_in)):
            if name in places and owner(places[name]) == library:
                return state, places[name]
        spelled = self.spelled.get(name, "")
        return "no", (f"text only: {spelled}" if spelled and owner(spelled) == library else "")


def owner(where: str) -> str:
    """The library whose headers hold a place (clang's builtin HIP headers: the HIP runtime)."""
    folder = where.split("/")[0]
    return next((library for library, (folders, _) in LIBRARIES.items() if folder in folders),
                "HIP")


def _library_release(root: Path, library: str) -> tuple[int, int] | None:
    path, pattern = VERSION_MACROS[library]
    if not (root / path).is_file():
        return None
    match = re.search(pattern, (root / path).read_text(encoding="utf-8", errors="replace"))
    if match is None:
        raise SetupError(f"{root / path}: no version found")
    if library == "HIP":
        return int(match.group(1)), int(match.group(2))
    version = ".".join(match.groups())
    if (library, version) not in LIBRARY_RELEASES:
        raise SetupError(f"{root / path}: {library} {version} is not a release this script "
                         "knows the ROCm version of (LIBRARY_RELEASES)")
    return LIBRARY_RELEASES[library, version]


def _strip_comments(text: str) -> str:
    """The text with comments blanked, newlines kept (so that lines still count)."""
    return re.sub(r"/\*.*?\*/|//[^\n]*",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def _spelled(root: Path, folders: tuple[str, ...]) -> dict[str, str]:
    """Every identifier of the library's headers (comments stripped) -> its first place."""
    places: dict[str, str] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or path.suffix not in (".h", ".hpp", ".inl", "") or \
                    {"nvidia_detail", "nvcc_detail"} & set(path.parts):
                continue
            text = _strip_comments(path.read_text(encoding="utf-8", errors="replace"))
            relative = path.relative_to(root).as_posix()
            for number, line in enumerate(text.split("\n"), 1):
                for name in re.findall(r"[A-Za-z_]\w*", line):
                    places.setdefault(name, f"{relative}:{number}")
    return places


def _program(root: Path, libraries: list[str]) -> str:
    """A HIP file that includes every public header of the tree's libraries."""
    headers = ["hip/hip_runtime.h"] + sorted(
        p.relative_to(root).as_posix() for p in (root / "hip").glob("*.h")
        if p.name != "hip_runtime.h")
    for library in libraries:
        headers += LIBRARIES[library][1] if library != "HIP" else []
    return "".join(f"#include <{header}>\n" for header in headers)


def _declarations(root: Path, source: Path, libraries: list[str], resource_dir: Path,
                  extra: tuple[str, ...]) -> dict[str, str]:
    """Names declared in the libraries' folders (or clang's builtin headers) -> their place,
    host and device sides together; raises SetupError when the headers do not parse."""
    import clang.cindex as cindex

    folders = tuple(folder + "/" for library in libraries for folder in LIBRARIES[library][0])
    builtin = str((resource_dir / "include").resolve()) + "/"
    prefix = str(root) + "/"
    kinds = {getattr(cindex.CursorKind, kind) for kind in DECLARATION_KINDS}
    scopes = {getattr(cindex.CursorKind, kind) for kind in SCOPES}
    found: dict[str, str] = {}  # the first declaration met (host side first)
    ours = {arg[2:].split("=")[0] for arg in clang_arguments(root, resource_dir, "host",
                                                             extra=extra) if arg.startswith("-D")}
    index = cindex.Index.create()
    for side in ("host", "device"):
        unit = index.parse(str(source), args=clang_arguments(root, resource_dir, side, extra=extra),
                           options=cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        errors = [d for d in unit.diagnostics if d.severity >= cindex.Diagnostic.Error]
        if errors:
            raise SetupError(f"{root}: the headers do not parse ({side}): {errors[0]}")
        places: dict[str, str | None] = {}

        def place(cursor) -> str | None:
            file = cursor.location.file
            if file is None:  # clang's own macros (__HIPCC__...), not the ones we pass
                return ("clang:predefined" if cursor.kind == cindex.CursorKind.MACRO_DEFINITION
                        and cursor.spelling not in ours else None)
            name = file.name
            if name not in places:
                relative = name[len(prefix):] if name.startswith(prefix) else None
                if relative is not None and relative.startswith(folders):
                    places[name] = relative
                elif str(Path(name).resolve()).startswith(builtin):
                    places[name] = "clang:" + Path(name).name
                else:
                    places[name] = None
            known = places[name]
            return known if known is None or known.startswith("clang:") else \
                f"{known}:{cursor.location.line}"

        def visit(cursor) -> None:
            for child in cursor.get_children():
                where = place(child)
                if where is None:
                    continue
                if child.kind in kinds and child.spelling:
                    found.setdefault(child.spelling, where)
                if child.kind in scopes:
                    visit(child)

        visit(unit.cursor)
    return found


def read_tree(root: Path, resource_dir: Path) -> Tree:
    """Parse one tree (its libraries that are installed)."""
    root = root.resolve()
    tree = Tree()
    for library in LIBRARIES:
        release = _library_release(root, library)
        if release is not None:
            tree.releases[library] = release
    if "HIP" not in tree.releases:
        raise SetupError(f"{root}: no hip/hip_version.h (not a HIP include folder)")
    libraries = sorted(tree.releases)
    with tempfile.TemporaryDirectory() as scratch:
        # a tree that is the system's /usr/include is reached through a folder of links to its
        # libraries: given with -isystem itself it would break libstdc++'s #include_next
        include = Path(scratch, "include")
        include.mkdir()
        for library in libraries:
            for folder in LIBRARIES[library][0]:
                (include / folder).symlink_to(root / folder)
        source = Path(scratch, "all.hip")
        source.write_text(_program(include, libraries), encoding="utf-8")
        plain = _declarations(include, source, libraries, resource_dir, ())
        with_macro = _declarations(include, source, libraries, resource_dir,
                                   (f"-D{OPT_IN_MACRO}",))
    tree.declared = plain
    tree.opt_in = {name: where for name, where in with_macro.items() if name not in plain}
    for library in libraries:
        for name, where in _spelled(root, LIBRARIES[library][0]).items():
            tree.spelled.setdefault(name, where)
    return tree


def _version(text: str) -> tuple[int, int] | None:
    return tuple(int(part) for part in text.split(".")[:2]) if text else None


def _fmt(release: tuple[int, int]) -> str:
    return f"{release[0]}.{release[1]}"


def table_rows(api_dir: Path = API_DIR) -> list[dict[str, str]]:
    """Every row of the name tables (manual.tsv's included) whose HIP name, if any, is an
    identifier, with its table."""
    rows = []
    for table in NAME_TABLES:
        lines = [line for line in (api_dir / f"{table}.tsv").read_text(encoding="utf-8").split("\n")
                 if line.strip() and not line.startswith("#")]
        header = lines[0].split("\t")
        for line in lines[1:]:
            row = dict(zip(header, line.split("\t")))
            if not row["hip"] or re.fullmatch(r"[A-Za-z_]\w*", row["hip"]):
                rows.append(dict(row, table=table))
    return rows


def _exists(row: dict[str, str], release: tuple[int, int]) -> bool:
    """Does the row say its HIP name exists in ``release``?"""
    added, removed = _version(row["hip_added"]), _version(row["hip_removed"])
    return bool(row["hip"]) and (added is None or added <= release) and (
        removed is None or removed > release)


def verdict(row: dict[str, str], states: list[tuple[str, tuple[int, int] | None]]) -> str:
    """agrees, or what the headers contradict, from each tree's (state, release). A row with no
    HIP name is checked by its CUDA name (HIP spells many device functions as CUDA does)."""
    problems, opt_in = [], False
    for state, release in states:
        if state == "not-checkable":
            continue
        declared = state != "no"
        opt_in |= state.startswith("with-")
        if declared != _exists(row, release):
            problems.append(f"{'declared' if declared else 'missing'}-in-{_fmt(release)}")
    if all(state == "not-checkable" for state, _ in states):
        return "not-checkable"
    if problems:
        # a CUDA name that HIP declares as well: maybe for other argument types only (__hmax2
        # for bf16 but not __half2), so a person decides; the others are wrong facts
        return ("unsupported-but:" if not row["hip"] else "wrong:") + ",".join(problems)
    return f"agrees-with-{OPT_IN_MACRO}" if opt_in else "agrees"


def evidence(old: Tree | None, new: Tree,
             api_dir: Path = API_DIR) -> tuple[list[list[str]], Counter]:
    """The evidence rows and the count of rows not checked per library. Rows with no HIP name
    are listed where the HIP runtime's headers (or clang's) spell their CUDA name or the row is
    a hand-written one (manual.tsv): the others are CUDA-only names (cudaFoo)."""
    trees = [tree for tree in (old, new) if tree is not None]
    runtime = {name for tree in trees for places in (tree.declared, tree.opt_in)
               for name, where in places.items() if owner(where) == "HIP"}
    out, unchecked = [], Counter()
    for row in table_rows(api_dir):
        name = row["hip"] or row["cuda"]
        library = "HIP" if name in runtime else TABLE_LIBRARY[row["library"]]
        spelled = name in runtime or any(name in tree.spelled for tree in trees)
        if not row["hip"] and (library != "HIP" or not (row["table"] == "manual" or spelled)):
            continue
        if library not in LIBRARIES:
            unchecked[library] += 1
            continue
        cells, states = [], []
        for tree in (old, new):
            state, where = tree.state(name, library) if tree else ("not-checkable", "")
            release = tree.releases.get(library) if tree else None
            states.append((state, release))
            cells.append((state, where, release))
        if all(state == "not-checkable" for state, _ in states):
            unchecked[library] += 1
            continue
        (old_state, old_where, old_release), (new_state, new_where, _) = cells
        out.append([row["cuda"], row["hip"], f"{row['table']}.tsv", library, row["hip_added"],
                    row["hip_removed"], _fmt(old_release) if old_release else "-", old_state,
                    new_state, old_where, new_where, verdict(row, states)])
    out.sort(key=lambda cells: (cells[2], cells[0]))
    return out, unchecked


def render(rows: list[list[str]], unchecked: Counter, old: Tree | None, new: Tree) -> str:
    verdicts = Counter(cells[-1].split(":")[0] for cells in rows)
    kinds = Counter(problem for cells in rows if cells[-1].startswith("wrong:")
                    for problem in cells[-1][len("wrong:"):].split(","))
    old_text = ("Debian 12 /usr/include: " + ", ".join(
        f"{library} of ROCm {_fmt(release)}" for library, release in sorted(old.releases.items()))
        if old else "not given")
    lines = [
        "# rocmigrate: the API tables' HIP versions checked against real headers, written by",
        "# scripts/verify_api_versions.py (do not edit: re-run it). Evidence: no rule reads it.",
        f"# new tree (--hip64): HIP {_fmt(new.releases['HIP'])} (../shared/data/hip-6.4/include); "
        f"old tree (--hip52): {old_text}.",
        "# A row per table row with a HIP name whose library has headers in a tree, and per row",
        "# without one (checked by its CUDA name) that manual.tsv writes or whose CUDA name the",
        "# HIP headers spell. in_old / in_6.4: libclang finds the name declared (yes), not (no),",
        f"# or only with -D{OPT_IN_MACRO}; old_release: the ROCm release of the old tree's",
        "# headers of that library. where_*: header (relative to the include folder) and line of",
        "# the first declaration; clang:FILE = clang's builtin HIP headers (no line: it varies by",
        "# clang release), clang:predefined = a compiler macro; 'text only' = spelled there",
        "# (outside comments) but not declared for HIP on AMD.",
        "# verdict: agrees; wrong:missing-in-R / declared-in-R = the row says the name exists in",
        "#   release R (hip_added <= R < hip_removed) and the headers say otherwise (rules/api/",
        "#   manual.tsv corrects the rows in use); unsupported-but:declared-in-R = a row with no",
        "#   HIP name whose CUDA name R declares, maybe for other argument types: for a person.",
        f"# rows: {len(rows)}; " + ", ".join(f"{v}: {n}" for v, n in sorted(verdicts.items()))
        + ("; wrong by kind: " + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items()))
           if kinds else ""),
        "# not checkable (no headers of the library in either tree): "
        + ", ".join(f"{library} {n}" for library, n in sorted(unchecked.items())),
        "\t".join(COLUMNS),
    ]
    lines += ["\t".join(cells) for cells in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hip64", type=Path, required=True,
                        help="HIP 6.4 include folder (../shared/data/hip-6.4/include)")
    parser.add_argument("--hip52", type=Path,
                        help="Debian 12's /usr/include (HIP 5.2.3, hipRAND/hipSPARSE 5.3.3)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true",
                        help="compare with --out instead of writing it (exit 1 when it differs)")
    options = parser.parse_args(argv)
    try:
        import clang.cindex  # noqa: F401
    except ImportError:
        print("error: libclang is not installed (pip install libclang)", file=sys.stderr)
        return 2
    resource_dir = find_resource_dir()
    if resource_dir is None:
        print("error: no clang builtin headers found (set ROCMIGRATE_CLANG_RESOURCE_DIR)",
              file=sys.stderr)
        return 2
    try:
        new = read_tree(options.hip64, resource_dir)
        old = read_tree(options.hip52, resource_dir) if options.hip52 else None
    except (SetupError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    text = render(*evidence(old, new), old, new)
    return gen_api_tables.write_evidence(options.out, text, options.check)


if __name__ == "__main__":
    sys.exit(main())
