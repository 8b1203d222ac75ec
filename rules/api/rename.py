"""API001: rename CUDA API names to their HIP equivalents, from the API tables."""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass
from typing import NamedTuple

from migrator.apitables import ApiEntry, ApiTables
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix, RenameRecord, Renames
from migrator.rule import Marker, Rule, RuleContext
from migrator.parsing.tokens import LiteralSpans, blank_literals
from migrator.semantic.calls import (BLANK_OR_MEMBER_END, WORD_BYTES, LexicalCall, arguments,
                                    code_end_before, is_member, lexical_call)
from migrator.semantic.scopes import enclosing_call
from migrator.versions import format_version

from ..cuda_context import in_cuda_context, needs_cuda_context
from ..markers import marker_fix
from ..portability.cuda_version_guards import folded
from ..target_names import renamable
from .math_constants import lacking as lacking_math_constants

LIBRARY_LABELS = {"cudnn": "MIOpen"}
# the libraries --roc and --dnn miopen convert to (their tables' library column), as named in
# findings; a name of the default tables has a HIP equivalent or none
TARGET_LABELS = {"rocblas": "rocBLAS", "rocrand": "rocRAND", "rocsparse": "rocSPARSE",
                 "rocsolver": "rocSOLVER", "miopen": "MIOpen"}


class _Name(NamedTuple):
    """What every occurrence of one actionable name gets for one target: the name-level tests
    and, for a plain rename, the finding's texts (a name recurs hundreds of times in a file)."""

    entry: ApiEntry
    contextual: bool  # acted on only in CUDA context (cuda_context.py)
    lowered: bool  # WRP001 or LOW001 lowers it for this target, or MTH001 keeps it
    rewritten: bool  # ARG001 renames its calls together with their arguments
    # a rename's finding: message, fix title, HIP name, whether the fix keeps the syntax (a
    # rename to an identifier), library, CUDA name
    rename: tuple[str, str, bytes, bool, str, str] | None
    # for a name renamed to an identifier wherever it names code (none of the tests above):
    # what each of its renames reports, in bulk
    plain: RenameRecord | None


@dataclass(frozen=True)
class _Index:
    candidates: re.Pattern
    names: dict[bytes, _Name]


def _actionable(entry: ApiEntry, rocm) -> bool:
    if entry.status != "supported" or entry.hip != entry.cuda:
        return True
    return (entry.hip_added is not None and entry.hip_added > rocm) or (
        entry.hip_removed is not None and entry.hip_removed <= rocm)


@functools.lru_cache(maxsize=8)
def _index(tables: ApiTables, rocm: tuple[int, int, int]) -> _Index:
    """Names that need action for this target, and a regex that finds identifiers that may be one
    of them (by their first two characters: far cheaper than a 5000-way alternation)."""
    lowered = {name for name, low in tables.lowerings.items()
               if low.kind != "header" and low.applies(rocm)}
    lowered |= lacking_math_constants(tables, rocm)
    names = {}
    for entry in tables.names.values():
        if not _actionable(entry, rocm):
            continue
        rename = None
        if renamable(entry, rocm):
            # the name is found in code only (comments, literals and includes blanked), so an
            # identifier written for it cannot change how the file parses
            keeps_syntax = entry.hip.isidentifier() and entry.hip.isascii()
            rename = (f"{entry.cuda} -> {entry.hip}", f"rename to {entry.hip}", entry.hip.encode(),
                      keeps_syntax, entry.library, entry.cuda)
        contextual = needs_cuda_context(entry)
        lowers = entry.cuda in lowered
        # ARG001 renames the calls of a name it can rename for the target; it leaves the others
        # (HIP lacks the name there, or --roc marks it) to be reported here
        rewritten = rename is not None and entry.cuda in tables.argument_rewrites
        plain = None
        if (rename is not None and keeps_syntax and entry.kind != "namespace"
                and not (contextual or lowers or rewritten)):
            plain = RenameRecord(*rename[:3], *rename[4:])
        names[entry.cuda.encode()] = _Name(entry, contextual, lowers, rewritten, rename, plain)
    # grouped by the first character, which the regex engine then checks once per position
    seconds: dict[bytes, set[bytes]] = {}
    for name in names:
        seconds.setdefault(name[:1], set()).add(name[1:2])
    alternation = b"|".join(re.escape(first) + b"(?:" + b"|".join(map(re.escape, sorted(second)))
                            + b")" for first, second in sorted(seconds.items()))
    return _Index(re.compile(rb"\b(?:" + alternation + rb")\w*"), names)


class ApiRename(Rule):
    """Rename CUDA API names (functions, types, enums, macros, device functions) to HIP.

    ## What it does
    Replaces each CUDA identifier that has a HIP equivalent in the target ROCm version with the
    HIP name, everywhere it appears as code: in statements, declarations, template arguments,
    casts, ``sizeof``, macro arguments, ``#define`` bodies and every ``#if`` branch. Comments,
    string and character literals and member names (``x.cudaFoo``) are left alone. Names not
    spelled as CUDA's own, such as the device functions ``__isnan``, ``__finite`` or ``umin``
    that glibc, libstdc++ and LLVM declare too, are acted on only in CUDA context: a
    ``.cu``/``.cuh`` file, device code, a CUDA include, or other CUDA API names in the file.
    So are the macros nvcc defines (``__CUDACC__`` -> ``__HIPCC__``, ``__CUDA_ARCH__``):
    libstdc++ and glibc headers test them (``!defined(__CUDACC__)``) and are left
    byte-identical, while a header that tests ``__CUDACC__`` to write ``__host__ __device__``
    has device code and is converted.

    A name that HIP lacks is not renamed to something that does not exist. It is reported, and
    the output carries a marker comment at the site:
    API002 (the HIP name is newer than the target ROCm, or was removed), API003 (no HIP
    equivalent), API004 (a report-only library such as cuDNN: MIOpen's API differs and needs a
    person; or, with ``--roc`` or ``--dnn miopen``, a call whose counterpart takes other
    arguments).

    Library calls go to the hip* marshalling libraries (hipBLAS, hipRAND, hipSPARSE,
    hipSOLVER, hipFFT) by default. ``--roc`` renames cuBLAS, cuRAND, cuSPARSE and cuSOLVER to
    rocBLAS, rocRAND, rocSPARSE and rocSOLVER instead (``cublasCreate`` ->
    ``rocblas_create_handle``, ``CUBLAS_OP_N`` -> ``rocblas_operation_none``), from HIPIFY's ROC
    tables; ``--dnn miopen`` renames cuDNN to MIOpen (``cudnnCreate`` -> ``miopenCreate``),
    which is otherwise reported. Names those libraries lack are API003, and calls whose
    counterpart takes other arguments (``cusparseSpMV`` -> ``rocsparse_spmv`` and its stage,
    ``cublasGemmEx`` -> ``rocblas_gemm_ex`` and its output matrix D) are API004: left as they
    are, marked.

    ## Why is this bad on AMD
    CUDA names do not exist in HIP: the code does not build with hipcc until they are converted.
    A converter that renames to a name missing from the installed ROCm trades one build error for
    a more confusing one.

    ## Example
    ```cpp
    cudaStream_t s;
    cudaStreamCreate(&s);
    ```

    ## Use instead
    ```cpp
    hipStream_t s;
    hipStreamCreate(&s);
    ```

    ## Fix safety
    Safe: the tables map a CUDA name to the HIP name with the same meaning, and only where that
    name exists in the target ROCm. Argument-level differences are handled by ARG001.
    """

    code = "API001"
    extra_codes = ("API002", "API003", "API004")
    category = "conversion"
    attention_codes = ("API002", "API003", "API004")
    name = "cuda-api-rename"
    summary = "CUDA API name has a HIP equivalent"
    family = "api"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        renames = Renames("API001")
        found = list(self._check(ctx, renames))
        return sorted(found + renames.diagnostics(), key=operator.attrgetter("start"))

    def check_renames(self, ctx: RuleContext) -> tuple[list[Diagnostic], Renames]:
        renames = Renames("API001")
        return list(self._check(ctx, renames)), renames

    def rename_text(self, ctx: RuleContext, start: int, end: int, text: bytes) -> bytes | None:
        """``text`` (a fix's, over [start, end)) with the plain renames ``_check`` would make
        in it once written; None where it holds a name that is no plain rename, or one whose
        place only a parse tells (a declared member, a trailing return type)."""
        index = _index(ctx.tables, ctx.settings.rocm)
        if index.candidates.search(text) is None:
            return text
        data = ctx.data
        if (text[:1] and text[0] in WORD_BYTES and start and data[start - 1] in WORD_BYTES
                or text[-1:] and text[-1] in WORD_BYTES and data[end : end + 1]
                and data[end] in WORD_BYTES):
            return None  # the text joins a word of the file: that word is judged whole
        code = blank_literals(text, LiteralSpans(text))
        after = code + ctx.code[end : end + 64]  # what follows a name at the text's end
        parts, pos = [], 0
        for match in index.candidates.finditer(code):
            name = index.names.get(match[0])
            if name is None:
                continue
            if name.plain is None:
                return None  # the next round does more than rename it (or nothing)
            name_start, name_end = match.span()
            kept = len(code[:name_start].rstrip())
            if kept:
                renamed = _renamed_after(code, kept, after, name_end)
            else:  # only blanks before it in the text: the file's code before the edit
                before = code_end_before(ctx, start)
                renamed = _renamed_after(ctx.code, before, after, name_end) if before else True
            if renamed is None:
                return None
            if renamed:
                parts += (text[pos:name_start], name.plain.text)
                pos = name_end
        return b"".join(parts) + text[pos:]

    def _check(self, ctx: RuleContext, renames: Renames):
        """The diagnostics of the names that are no plain renames (those go to ``renames``)."""
        index = _index(ctx.tables, ctx.settings.rocm)
        data = ctx.data
        names = index.names
        code = ctx.code
        safe = Applicability.SAFE
        starts, ends, records = renames.starts, renames.ends, renames.records
        # candidates from the text with comments and literals blanked (same offsets): a name
        # in a comment or literal is none, and those left start in code
        for match in index.candidates.finditer(code):
            name = names.get(match[0])
            if name is None:
                continue
            start, end = match.span()
            # most API names follow a `(`: _names_code_outside_literals's first test, inline
            if not (start and code[start - 1] in _PLAIN_BEFORE
                    or _names_code_outside_literals(ctx, start, end)):
                continue
            if name.plain is not None:  # the common case has none of the tests below to pass
                starts.append(start)
                ends.append(end)
                records.append(name.plain)
                continue
            entry = name.entry
            if entry.kind == "namespace" and not data[end : end + 8].lstrip().startswith(b"::"):
                continue
            if name.contextual and not in_cuda_context(ctx):
                continue  # __isnan, umin... in a C library header are not CUDA's
            if name.lowered:
                continue  # WRP001 or LOW001 lowers it for this target, or MTH001 keeps it
            if name.rewritten and isinstance(lexical_call(ctx, start, end), LexicalCall):
                continue  # ARG001 renames it together with its arguments
            if name.rename is None:
                if (entry.cuda in ctx.tables.attribute_calls
                        and _attribute_of_call(ctx, entry, start)):
                    continue  # ARG001 folds or marks the call it is the attribute of
                if not folded(ctx, entry.cuda, start):  # VER001 folds it in an #if
                    yield from self._diagnose(ctx, entry, start, end)
                continue
            if not entry.hip.isidentifier() and _declared_here(ctx, start, end):
                continue  # `typedef size_t (*CUoccupancyB2DSize)(int)`: no `void*` there
            message, title, hip, keeps_syntax, library, cuda = name.rename
            yield Diagnostic("API001", message, start, end,
                             Fix(title, (Edit(start, end, hip),), safe, (), keeps_syntax),
                             library, cuda, "info")

    def _diagnose(self, ctx: RuleContext, entry: ApiEntry, start: int, end: int):
        """The finding for a name the target lacks (a rename is made in ``_check``)."""
        rocm = ctx.settings.rocm
        target = format_version(rocm)
        if entry.status == "report_only":
            label = LIBRARY_LABELS.get(entry.library, entry.library)
            text = (f"{entry.cuda} is not converted; the {label} counterpart is {entry.hip} "
                    "and its API differs" if entry.hip else
                    f"{entry.cuda} is not converted and has no {label} counterpart")
            yield self._marked(ctx, "API004", text, entry, start)
            return
        target_library = TARGET_LABELS.get(entry.library, "HIP")
        if entry.status == "arguments_differ" and entry.hip:
            text = (f"{entry.cuda} is not converted: its {target_library} counterpart "
                    f"{entry.hip} takes other arguments")
            yield self._marked(ctx, "API004", text, entry, start)
            return
        if entry.status != "supported" or not entry.hip:
            text = f"{entry.cuda} has no {target_library} equivalent in ROCm {target}"
            yield self._marked(ctx, "API003", text, entry, start)
            return
        if entry.hip_added is not None and entry.hip_added > rocm:
            added = format_version(entry.hip_added)
            text = (f"{entry.cuda} does not exist in HIP before ROCm {added} (target {target})"
                    if entry.hip == entry.cuda else
                    f"{entry.cuda} has no {target_library} equivalent in ROCm {target} "
                    f"({entry.hip} exists from ROCm {added})")
            yield self._marked(ctx, "API002", text, entry, start)
            return
        if entry.hip_removed is not None and entry.hip_removed <= rocm:
            text = (f"{entry.cuda} has no {target_library} equivalent in ROCm {target} "
                    f"({entry.hip} was removed in ROCm {format_version(entry.hip_removed)})")
            yield self._marked(ctx, "API002", text, entry, start)

    def _marked(self, ctx: RuleContext, code: str, text: str, entry: ApiEntry, start: int):
        fix = marker_fix(ctx, start, Marker(code, text))
        return Diagnostic(code, text, start, start + len(entry.cuda), fix,
                          library=entry.library, symbol=entry.cuda)


def _attribute_of_call(ctx: RuleContext, entry: ApiEntry, start: int) -> bool:
    """Is the attribute constant at ``start`` argument 1 of a call ARG001 folds or marks?"""
    if ctx.in_directive(start):
        return False  # ARG001 leaves a call in a #define body
    call = enclosing_call(ctx, start, max(0, start - 4096))
    if call is None or call[0].decode() not in ctx.tables.attribute_calls[entry.cuda]:
        return False
    spans = arguments(ctx, call[1] + len(call[0]))
    return spans is not None and len(spans) > 1 and spans[1][0] <= start < spans[1][1]


def names_code(ctx: RuleContext, start: int, end: int) -> bool:
    """True when the identifier at [start, end) is code that can name an API: not in a comment
    or literal, not a member (``x.name``, ``p -> name``) and not a struct field declared with
    that name. Rules that rename identifiers share this test."""
    return ctx.literals.covering(start) is None and _names_code_outside_literals(ctx, start, end)


# the bytes that may end the type before a declared name (`int name`, `T* name`, `A<B> name`)
_TYPE_END = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*&>")
# bytes right before a name (in the code view) that make it neither a member (is_member) nor a
# declared name (_declares_member): `(name`, `!name`, `= name`
_PLAIN_BEFORE = frozenset(range(256)) - frozenset(BLANK_OR_MEMBER_END) - _TYPE_END


def _names_code_outside_literals(ctx: RuleContext, start: int, end: int) -> bool:
    """names_code for a name known to start outside comments and literals."""
    if start > 0 and ctx.code[start - 1] in _PLAIN_BEFORE:  # most API names follow a `(`
        return True
    return not (is_member(ctx, start) or _declares_member(ctx, start, end))


_DECLARATOR_END = re.compile(rb"[ \t]*[;\[=:,({]")
_NOT_TYPES = {b"return", b"case", b"throw", b"co_return", b"else", b"do", b"goto", b"sizeof",
              b"typedef", b"using", b"new", b"delete"}


def _declares_member(ctx: RuleContext, start: int, end: int) -> bool:
    """A struct member that happens to carry an API name (``int cudaMalloc;``) is not the API.

    Only an identifier that follows a type-like token and precedes a declarator end can be one;
    that lexical test is cheap and rarely true, and only then does the tree decide."""
    code = ctx.code
    if not start or code[start - 1] in _PLAIN_BEFORE:
        return False  # `(name`, `= name`: no type before it (read without a copy of 64 bytes)
    if not _DECLARATOR_END.match(ctx.data, end):
        return False
    # comments, blanks and directives above skipped
    if not _type_ends_at(code, code_end_before(ctx, start)):
        return False
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    return node is not None and node.type == "field_identifier"


def _type_ends_at(code: bytes, code_end: int) -> bool:
    """Could the code before ``code_end`` (past its last byte of code) end a type, so that a
    name after it is declared (``int name``, ``T* name``; not ``return name``)?"""
    if not code_end or code[code_end - 1] not in _TYPE_END:
        return False
    word = re.search(rb"[A-Za-z_][A-Za-z0-9_]*$", code[max(0, code_end - 64) : code_end])
    return word is None or word.group() not in _NOT_TYPES


def _renamed_after(code: bytes, code_end: int, after: bytes, name_end: int) -> bool | None:
    """Does a plain rename apply to a name whose code before ends at ``code_end`` of ``code``
    (past its last byte of code) and ending at ``name_end`` of ``after``: no member, no
    declared name? None where only the tree can tell (as ``_names_code_outside_literals``
    asks it)."""
    last = code[code_end - 1]
    if last in _PLAIN_BEFORE:
        return True
    if last == ord(".") or code[max(0, code_end - 2) : code_end] == b"->":
        return False if last == ord(".") else None  # a member (or a trailing return type)
    if _DECLARATOR_END.match(after, name_end) and _type_ends_at(code, code_end):
        return None  # maybe a declared member: _declares_member asks the tree
    return True


def _declared_here(ctx: RuleContext, start: int, end: int) -> bool:
    """Is the name at [start, end) the one a declarator declares (a typedef's new name)?"""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    parent = node.parent if node is not None else None
    return parent is not None and parent.child_by_field_name("declarator") == node


