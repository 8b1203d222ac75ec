"""MKF008: the CUDA toolkit's location in Makefiles and shell build scripts becomes ROCm's."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles import make
from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .make_commands import references, view

_NAMES = ("CUDA_PATH", "CUDA_HOME", "CUDA_DIR", "CUDA_ROOT", "CUDA_INSTALL_PATH",
          "CUDA_TOOLKIT_ROOT_DIR", "CUDA_TOOLKIT_PATH", "CUDATOOLKIT_HOME", "CUDA_TOOLKIT_DIR")
_NAME_GROUP = "|".join(_NAMES)
# a CUDA root ($(CUDA_PATH), ${CUDA_HOME}, $CUDA_DIR, /usr/local/cuda[-12.4]) and the path after it
_ROOT = re.compile(
    rf"(?:\$\((?P<paren>{_NAME_GROUP})\)|\$\{{(?P<brace>{_NAME_GROUP})(?P<default>[:\-=+?][^}}]*)?\}}"
    rf"|\$(?P<bare>{_NAME_GROUP})(?!\w)|(?<![\w/.])(?P<literal>/usr/local/cuda(?:-[0-9.]+)?)"
    rf"(?![\w.\-]))(?P<tail>/[^\s\"':;,)]*)?".encode())
_LITERAL = re.compile(rb"(?<![\w/.])/usr/local/cuda(?:-[0-9.]+)?(?![\w.\-])")
_ROCM = "/opt/rocm"
# the parts of a CUDA installation ROCm has under the same name
_SAME_PARTS = frozenset({"", "include", "lib", "bin"})
# the root variables as _chains reads them: the CUDA ones and ROCM_PATH, which they become (a
# later fix round reads what the first one wrote)
_CHAIN_NAMES = (*_NAMES, "ROCM_PATH")
# a value that is one reference to a root variable: $(CUDA_DIR) or ${CUDA_DIR}
_ALIAS = re.compile(rf"\$(?:\((?P<paren>{_NAME_GROUP}|ROCM_PATH)\)"
                    rf"|\{{(?P<brace>{_NAME_GROUP}|ROCM_PATH)\}})".encode())
# operators after which a one-reference value makes the variable another name of that one
_ALIAS_OPS = frozenset({"=", "?=", ":=", "::=", ":::="})


class MakeToolkitPaths(Rule):
    """`CUDA_PATH` / `CUDA_HOME` / `/usr/local/cuda` become `ROCM_PATH` / `/opt/rocm`.

    ## What it does
    Renames the variables that hold the CUDA toolkit's folder (`CUDA_PATH`, `CUDA_HOME`,
    `CUDA_DIR`, `CUDA_ROOT`, `CUDA_INSTALL_PATH`, `CUDA_TOOLKIT_ROOT_DIR`...) to `ROCM_PATH`,
    where they are defined and used (`$(CUDA_PATH)`, `${CUDA_HOME}`, `$CUDA_DIR`, `ifdef`),
    and writes `/opt/rocm` for the literal `/usr/local/cuda` (or `/usr/local/cuda-12.4`). A
    path inside it keeps its part where ROCm has the same (`include`, `lib`, `bin`);
    `lib64` becomes `lib`. Any other part (`samples/common/inc`, `extras/CUPTI`, `nvvm`) has no
    ROCm counterpart: a `# rocmigrate MKF009:` marker says so.

    ## Why is this bad on AMD
    A ROCm system has no CUDA toolkit: include and library paths under it do not exist, and
    a Makefile that runs `$(CUDA_PATH)/bin/nvcc` finds nothing. ROCm installs under
    `/opt/rocm` and its tools read the `ROCM_PATH` environment variable (AMD's ROCm
    installation documentation); hipcc is `$(ROCM_PATH)/bin/hipcc`, the libraries are in
    `$(ROCM_PATH)/lib` (no lib64).

    ## Example
    ```make
    CUDA_PATH ?= /usr/local/cuda
    NVCC = $(CUDA_PATH)/bin/nvcc
    LDFLAGS = -L$(CUDA_PATH)/lib64 -lcublas
    ```

    ## Use instead
    ```make
    ROCM_PATH ?= /opt/rocm
    NVCC = $(ROCM_PATH)/bin/hipcc
    LDFLAGS = -L$(ROCM_PATH)/lib -lhipblas
    ```

    Several such variables become the one `ROCM_PATH`, so a Makefile line that only made one
    another's name (`CUDA_INSTALL_PATH = $(CUDA_DIR)`) would become `ROCM_PATH = $(ROCM_PATH)`,
    which make refuses (`Recursive variable 'ROCM_PATH' references itself`): such a line is
    removed (`export ROCM_PATH` is left where it exported the variable). A variable whose value
    is made from another one (`CUDA_HOME = $(CUDA_PATH)/targets/x86_64-linux`, `CUDA_PATH =
    $(or $(CUDA_HOME),/usr/local/cuda)`) keeps its own name, with its uses and the names it is
    another name of: only the root it reads becomes ROCm's, and every variable still has a value.

    ## Fix safety
    Always fixed. A distribution's ROCm may live elsewhere (Debian: `/usr`): `ROCM_PATH ?=`
    keeps the environment's value, as `CUDA_PATH ?=` did.
    """

    code = "MKF008"
    extra_codes = ("MKF009",)
    name = "make-cuda-toolkit-paths"
    summary = "CUDA_PATH / CUDA_HOME / /usr/local/cuda in Makefiles and scripts become ROCm's"
    family = "build"
    fix = "always"
    category = "conversion"
    attention_codes: ClassVar[tuple[str, ...]] = ("MKF009",)
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        made = view(ctx)
        kept, aliases = _chains(ctx) if ctx.language == "make" else (set(), [])
        removed: list[tuple[int, int]] = []
        for line in aliases:
            end = line.end + 1 if ctx.data[line.end : line.end + 1] == b"\n" else line.end
            exported = ctx.data[line.start : ctx.data.index(line.name.encode(), line.start)]
            written = b"export ROCM_PATH" + ctx.source.newline if b"export" in exported.split() else b""
            removed.append((line.start, end))
            value = ctx.data[line.value_start : line.value_end].decode("utf-8", "replace")
            yield Diagnostic("MKF008", f"{line.name} {line.op} {value}: the same folder as "
                             "ROCM_PATH (removed: ROCM_PATH would reference itself)",
                             line.start, end,
                             Fix("remove the alias", (Edit(line.start, end, written),)),
                             symbol=line.name, severity="info")
        for assignment in made.assignments:
            if any(start <= assignment.name_start < end for start, end in removed):
                continue
            if assignment.name in _NAMES and assignment.name not in kept:
                start = assignment.name_start
                end = start + len(assignment.name)
                yield Diagnostic("MKF008", f"{assignment.name} (defined) -> ROCM_PATH",
                                 start, end,
                                 Fix("ROCM_PATH", (Edit(start, end, b"ROCM_PATH"),)),
                                 symbol=assignment.name, severity="info")
        seen: set[int] = set()
        for words in made.texts:
            for word in words:
                if any(start <= word.start < end for start, end in removed):
                    continue
                if word.value in kept:
                    continue
                if word.value in _NAMES and word.start not in seen:  # ifdef CUDA_PATH
                    seen.add(word.start)
                    if not any(word.start == a.name_start for a in made.assignments):
                        yield Diagnostic("MKF008", f"{word.value} (named) -> ROCM_PATH",
                                         word.start,
                                         word.end, Fix("ROCM_PATH", (Edit(
                                             word.start, word.end, b"ROCM_PATH"),)),
                                         symbol=word.value, severity="info")
                    continue
                for found in _ROOT.finditer(word.text):
                    start = word.start + found.start()
                    name = found.group("paren") or found.group("brace") or found.group("bare")
                    if name is not None and name.decode() in kept:
                        continue
                    if start not in seen:
                        seen.add(start)
                        yield from _root(ctx, found, word.start)


def _chains(ctx: BuildContext):
    """How a Makefile's CUDA root variables refer to one another: the names that keep their
    own name (a value made from another one, or another name of such a variable), and the
    assignment lines that only make one another's name, removed where both become ROCM_PATH.
    The make files it includes or that include it (ctx.related) count too: their variables
    are the same variables."""
    texts = [(ctx.data, ctx.lines, True)]
    texts += [(other.data, make.read_makefile(other.data), False) for other in ctx.related]
    values: dict[str, list[bytes]] = {}
    lines = [(data, line, own) for data, read, own in texts for line in read
             if line.kind == "assignment"]
    for data, line, _ in lines:
        values.setdefault(line.name, []).append(data[line.value_start : line.value_end])
    parent = {name: name for name in _CHAIN_NAMES}

    def find(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    aliases = []
    derived = []
    for data, line, own in lines:
        if line.name not in _CHAIN_NAMES:
            continue
        value = data[line.value_start : line.value_end].strip()
        alias = _ALIAS.fullmatch(value)
        target = alias and (alias.group("paren") or alias.group("brace")).decode()
        if alias and line.op in _ALIAS_OPS and target != line.name:
            parent[find(line.name)] = find(target)
            if own:
                aliases.append(line)
        else:
            derived.append((line.name, value))
    kept_roots = set()
    for name, value in derived:
        for other in _reached(value, values):
            if find(other) != find(name):
                kept_roots.add(find(name))
    kept = {name for name in _NAMES if find(name) in kept_roots}
    return kept, [line for line in aliases if line.name not in kept]


def _reached(value: bytes, values: dict[str, list[bytes]]) -> set[str]:
    """The CUDA root variables a value reads, directly or through other variables."""
    found: set[str] = set()
    seen: set[str] = set()
    pending = [value]
    while pending:
        for name, _, _ in references(pending.pop()):
            if name in _CHAIN_NAMES:
                found.add(name)
            elif name not in seen:
                seen.add(name)
                pending.extend(values.get(name, ()))
    return found


def _root(ctx: BuildContext, found: re.Match, offset: int):
    name = (found.group("paren") or found.group("brace") or found.group("bare") or b"").decode()
    if found.group("paren"):
        root = b"$(ROCM_PATH)"
    elif found.group("brace"):  # ${CUDA_HOME:-/usr/local/cuda} keeps its default, mapped
        default = _LITERAL.sub(_ROCM.encode(), found.group("default") or b"")
        root = b"${ROCM_PATH" + default + b"}"
    elif found.group("bare"):
        root = b"$ROCM_PATH"
    else:
        root, name = _ROCM.encode(), found.group("literal").decode()
    tail = (found.group("tail") or b"").decode()
    part = tail.split("/")[1] if tail else ""
    new_tail = "/lib" + tail[len("/lib64"):] if part == "lib64" else tail
    start, end = offset + found.start(), offset + found.end()
    written = root + new_tail.encode()
    message = f"{name}{tail} -> {written.decode()}"
    fix = Fix("ROCm path", (Edit(start, end, written),))
    if part in _SAME_PARTS or part == "lib64":
        yield Diagnostic("MKF008", message, start, end, fix, symbol=name, severity="info")
        return
    reason = f"{name}{tail}: the CUDA toolkit's {part} has no counterpart in ROCm"
    marker = marker_fix(ctx, start, Marker("MKF009", reason))
    yield Diagnostic("MKF009", reason, start, end,
                     Fix("ROCm path", (marker.edits if marker else ()) + fix.edits,
                         marker=marker is not None), symbol=name)
