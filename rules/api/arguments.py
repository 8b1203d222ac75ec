"""ARG001/ARG002: argument-level rewrites for CUDA calls whose HIP counterpart differs in
more than its name (symbol wrapping, pointer casts, added or removed arguments)."""

from __future__ import annotations

import functools
import os
import re
from itertools import chain

from migrator.apitables import ATTRIBUTE_ACTIONS
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import LexicalCall, find_name, lexical_call
from migrator.semantic.scopes import blocks, enclosing_call, function_at, statement_start
from migrator.semantic.lookup import value_declaration
from migrator.semantic.types import normal_type

from ..markers import marker_fix
from ..target_names import renamable

def _cast_already(text: str, value: str) -> bool:
    """Is ``text`` already cast to the type ``value`` casts to, in either spelling (spaces
    aside): ``(const void*)k`` and ``reinterpret_cast<const void *>(k)`` for either value?"""
    return "".join(text.split()).startswith(_cast_spellings(value))


@functools.lru_cache(maxsize=None)
def _cast_spellings(value: str) -> tuple[str, ...]:
    cast_type = next(group for group in _CAST_TYPE.fullmatch(value).groups() if group)
    target = "".join(cast_type.split())
    return f"({target})", f"reinterpret_cast<{target}>", f"static_cast<{target}>"


_CAST_TYPE = re.compile(r"\((.+)\)|(?:static|reinterpret)_cast<(.+)>")
_ALREADY = {
    # ``&sym`` already is the symbol's address, which HIP's symbol APIs take as they are
    "wrap_symbol": lambda text, value: text.startswith((value + "(", "&")),
    "cast": _cast_already,
    "disambiguate": lambda text, value: _cast_already(text, _disambiguating_cast(value)),
}


def _disambiguating_cast(value: str) -> str:
    """The C cast of a ``disambiguate`` row: to the first of its types (CUDA's parameter type)."""
    return f"({value.split('|')[0].strip()})"


def _integer_type(type_name: str) -> str:
    """A fundamental integer type's words in one spelling (``long long int`` and ``signed long
    long`` are ``long long``); other types as they are."""
    words = type_name.split()
    if not words or any(word not in ("signed", "unsigned", "short", "long", "int", "char")
                        for word in words):
        return type_name
    spelled = [word for word in words if word not in ("signed", "int")] or ["int"]
    if "char" in words and "signed" in words:
        spelled.insert(0, "signed")  # signed char is a type of its own
    return " ".join(sorted(spelled, key=("unsigned", "signed", "short", "long", "char", "int").index))


def _declared_exactly(ctx: RuleContext, begin: int, finish: int, value: str) -> bool:
    """Is the argument a plain name declared with one of the ``disambiguate`` row's types (an
    exact HIP overload: no cast needed)? A type spelled through an alias (``int64_t``, which is
    ``long`` on Linux and ``long long`` on Windows) is not known exactly: it is cast."""
    name = ctx.data[begin:finish].strip().decode("ascii", "replace")
    if not name.isidentifier():
        return False
    declaration = value_declaration(ctx, name, begin)
    if declaration is None or declaration.pointers:
        return False
    exact = {_integer_type(normal_type(t)) for t in value.split("|")}
    return _integer_type(declaration.type) in exact


class ArgumentRewrite(Rule):
    """Rewrite the arguments of CUDA calls whose HIP counterpart takes them differently.

    ## What it does
    Applies the argument changes listed in ``rules/api/argument_rewrites.tsv``: wraps the symbol
    argument of the ``*Symbol*`` family in ``HIP_SYMBOL()``
    (``cudaMemcpyToSymbol(c, …)`` -> ``hipMemcpyToSymbol(HIP_SYMBOL(c), …)``; a variable
    template's instance in parentheses, ``HIP_SYMBOL((table<float, 4>))``, as the macro's
    argument list would split at its commas), casts kernel
    pointers to ``const void*`` where HIP's prototype takes one, casts ``&typed_ptr`` to
    ``void**`` where the target's HIP has no templated overload (``hipHostGetDevicePointer``;
    ``hipHostAlloc`` and ``hipMallocPitch`` before ROCm 6.4), adds, inserts or removes arguments
    where the HIP signature has a different arity, and calls another HIP function where CUDA
    overloads one name on the arity (``cudaEventCreate(&e, flags)`` ->
    ``hipEventCreateWithFlags``, 3-argument ``cudaGraphInstantiate`` ->
    ``hipGraphInstantiateWithFlags``). It renames these calls itself, with their arguments.
    Inside a ``#define`` body the call cannot be rewritten safely: ARG002 reports it and marks
    the site. ARG002 also marks legacy cuBLAS calls (``cublas.h``, no handle: told by their
    arity), which hipBLAS has no counterpart for: its functions of the same names take a handle.
    cuBLASLt descriptor attributes hipBLASLt takes only at creation
    (``CUBLASLT_MATMUL_DESC_SCALE_TYPE``, ``..._COMPUTE_TYPE``): a ``SetAttribute`` call that
    provably follows the ``cublasLtMatmulDescCreate`` of the same descriptor in the same block
    (the descriptor given to nothing but other attribute settings between), with a variable
    declared before it and not used between, has its value passed as the
    creation's ``scaleType`` / ``computeType`` and is dropped; otherwise, and where code reads
    them back, ARG002 marks the call with what to do.

    ## Why is this bad on AMD
    On AMD, HIP's symbol APIs take the symbol's address (``HIP_SYMBOL``), and the function
    attribute APIs take ``const void*``: the renamed call alone does not compile, or worse,
    passes the wrong pointer.

    ## Example
    ```cpp
    __constant__ float coeffs[16];
    cudaMemcpyToSymbol(coeffs, host, sizeof(coeffs));
    ```

    ## Use instead
    ```cpp
    __constant__ float coeffs[16];
    hipMemcpyToSymbol(HIP_SYMBOL(coeffs), host, sizeof(coeffs));
    ```

    ## Fix safety
    Safe: each rewrite is the documented HIP calling convention for that function. Calls inside
    macros, legacy cuBLAS calls and attribute calls not provably folded are reported only.
    """

    code = "ARG001"
    extra_codes = ("ARG002",)
    category = "conversion"
    attention_codes = ("ARG002",)
    name = "cuda-call-arguments"
    summary = "CUDA call needs its arguments changed for HIP"
    family = "api"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        tables, rocm = ctx.tables, ctx.settings.rocm
        claimed, renames = tables.argument_rewrites, tables.call_renames
        rewritten, renamed = _searched(tables)
        data = ctx.data
        searched = [*(names for prefix, names in rewritten if prefix in data),
                    *(names for end_, names in renamed if _called_longer(ctx, end_))]
        for name, start, end in chain.from_iterable(find_name(ctx, names) for names in searched):
            written = name.decode()
            rewrites = claimed.get(written)
            if rewrites is None:
                if not _LONGER_LIST.match(ctx.code, end):
                    continue  # cudaEventCreate(&e), thousands of them: none of these renames
                rewrites = renames[written]
            cuda = rewrites[0].cuda
            entry = tables.names.get(cuda)
            if not renamable(entry, rocm):
                continue
            call = lexical_call(ctx, start, end)
            if call == "macro":
                # (the calls of one arity ARG001 cannot tell here are API001's renames)
                shown = [r for r in rewrites if r.action not in ("mark", *ATTRIBUTE_ACTIONS)
                         and (r.below is None or rocm < r.below)]
                if written not in claimed or not shown:
                    continue
                text = f"{cuda} inside a macro: change its arguments for HIP by hand (" + \
                    "; ".join(_describe(r) for r in shown) + ")"
                yield Diagnostic("ARG002", text, start, end,
                                 marker_fix(ctx, start, Marker("ARG002", text)), symbol=cuda)
                continue
            if call is None:
                continue
            count = len(call.arguments)
            attribute = _attribute(ctx, call)
            applying, mark, hip, title = _plan(tables, written, rocm, count, attribute)
            if mark is not None:
                text = (f"{cuda} with {count} arguments: {mark.value}: port it to {entry.hip} "
                        "by hand" if mark.action == "mark" else
                        f"{cuda} with {attribute}: {mark.value.split(None, 1)[1]}")
                yield Diagnostic("ARG002", text, start, end,
                                 marker_fix(ctx, start, Marker("ARG002", text)), symbol=cuda)
                continue
            fold = next((r for r in applying if r.action == "fold_into"), None)
            if fold is not None:
                yield _folded(ctx, call, fold, start, end)
                continue
            if hip is None:
                continue  # API001's rename is all this call needs
            unresolved = next((r for r in applying if r.action == "append_argument_of"
                               and _argument_of(ctx, call, r.value, start) is None), None)
            if unresolved is not None:
                source, match, _ = unresolved.value.split()
                text = (f"{cuda} with {count} arguments: {entry.hip} takes one more, the "
                        f"argument {int(_) + 1} of the {source} call with the same argument "
                        f"{int(match) + 1}, which this file does not show: add it by hand")
                yield Diagnostic("ARG002", text, start, end,
                                 marker_fix(ctx, start, Marker("ARG002", text)), symbol=cuda)
                continue
            # The rename travels with the argument edits (API001 leaves these calls alone), so a
            # fix that must wait for a nested one never leaves a renamed call with old arguments.
            edits = [Edit(start, end, hip.encode())] if written != hip else []
            keeps_syntax = True
            made = []
            for rewrite in applying:
                edit = _edit(ctx, call, rewrite)
                if edit is not None:
                    edits.append(edit)
                    made.append((rewrite, edit))
                    keeps_syntax &= _keeps_syntax(ctx, call, rewrite)
            if not edits:
                continue  # every change is there already (a name HIP keeps, its argument cast)
            if any(r.action == "replace_value" for r in applying):  # (only where one was made)
                title = "; ".join(_made(ctx, r, e) for r, e in made if r.action != "rename")
            change = f"{written} -> {hip}" if written != hip else written
            yield Diagnostic("ARG001", f"{change}{title and ': '}{title}", start, end,
                             Fix(f"rename to {hip}{title and '; '}{title}", tuple(edits),
                                 keeps_syntax=keeps_syntax),
                             library=entry.library, symbol=cuda, severity="info")


@functools.lru_cache(maxsize=1024)
def _plan(tables, written: str, rocm, count: int, attribute: str = ""):
    """What a call of ``written`` with ``count`` arguments (and ``attribute`` as argument 1)
    gets for the target: the rows that apply to it, the one that marks it (or None), the HIP
    name it calls (None: none of these rows applies, API001 renames it) and the changes
    described."""
    rewrites = tables.argument_rewrites.get(written) or tables.call_renames[written]
    applying = [r for r in rewrites if r.applies(rocm, count, attribute)
                and (r.action != "rename" or _exists(tables, r.value, rocm))]
    mark = next((r for r in applying if r.action in ("mark", "mark_attribute")), None)
    hip = next((r.value for r in applying if r.action == "rename"),
               tables.names[rewrites[0].cuda].hip)
    if written not in tables.argument_rewrites and not applying:
        hip = None
    title = "; ".join(_describe(r) for r in applying if r.action != "rename")
    return tuple(applying), mark, hip, title


@functools.lru_cache(maxsize=8)
def _searched(tables) -> tuple[tuple[tuple[bytes, frozenset[bytes]], ...], ...]:
    """The names ARG001 looks for: the CUDA names whose calls it rewrites, by their first four
    bytes (a regex of names with a long common prefix jumps from one occurrence of it to the
    next; a group whose prefix a file lacks is not searched); and both names of those whose
    calls of one arity it renames (after API001's rename, in the next round), with the end
    they share (``EventCreate``): a file that calls none with two arguments or more, as the
    shared end finds them in one pass, is not searched for them."""
    rewritten: dict[bytes, set[bytes]] = {}
    for name in tables.argument_rewrites:
        rewritten.setdefault(name[:4].encode(), set()).add(name.encode())
    renamed = []
    for name, rows in sorted(tables.call_renames.items()):
        if name == rows[0].cuda:  # (keyed by the HIP name too)
            names = {name.encode(), tables.names[name].hip.encode()}
            renamed.append((os.path.commonprefix([n[::-1] for n in names])[::-1], frozenset(names)))
    return (tuple((prefix, frozenset(names)) for prefix, names in sorted(rewritten.items())),
            tuple(renamed))


# an argument list that may hold two arguments or more: one with a comma or a nested '('
# (the table's renames by arity are all for two arguments or more)
_LONGER_LIST = re.compile(rb"\s*\((?![^(),]*\))")


def _called_longer(ctx: RuleContext, name: bytes) -> bool:
    """Is ``name`` (or the end of a name) followed somewhere by an argument list that may hold
    two arguments or more?
    (bytes.find goes from one occurrence to the next far faster than a regex search.)"""
    data, code = ctx.data, ctx.code
    at = data.find(name)
    while at >= 0:
        if _LONGER_LIST.match(code, at + len(name)):
            return True
        at = data.find(name, at + len(name))
    return False


def _exists(tables, hip: str, rocm) -> bool:
    """Does the target have the HIP function ``hip`` (a name some table row renames to)?"""
    return any(renamable(entry, rocm) for entry in _by_hip(tables).get(hip, ()))


@functools.lru_cache(maxsize=8)
def _by_hip(tables) -> dict:
    named: dict = {}
    for entry in tables.names.values():
        named.setdefault(entry.hip, []).append(entry)
    return named


def _split_by_macro(code: bytes) -> bool:
    """Would a macro's argument list split this argument (in the code view) at a comma outside
    parentheses, as a template-id's (``table<float, 4>``)?"""
    depth = 0
    for byte in code:
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            depth -= 1
        elif byte == 44 and not depth:  # ','
            return True
    return False


def _argument_of(ctx: RuleContext, call, value: str, before: int) -> bytes | None:
    """For ``append_argument_of`` (value ``FUNCTION MATCH TAKE``): argument TAKE of the last
    call of FUNCTION (or its HIP name) before ``before`` in the same function whose argument
    MATCH is written as this call's is (the same descriptor), when it is a plain name; else
    None."""
    source, match, take = value.split()
    match, take = int(match), int(take)
    if match >= len(call.arguments):
        return None
    begin, finish = call.arguments[match]
    wanted = ctx.code[begin:finish].strip()
    entry = ctx.tables.names.get(source)
    names = {source.encode()} | ({entry.hip.encode()} if entry is not None and entry.hip else set())
    body = function_at(ctx, call.close)  # the buffer's name is in scope in the same function
    found = None
    for _, start, end in find_name(ctx, names):
        if start >= before:
            break
        if body is None or not body.contains(start):
            continue
        other = lexical_call(ctx, start, end)
        if other is None or other == "macro" or len(other.arguments) <= max(match, take):
            continue
        begin, finish = other.arguments[match]
        if ctx.code[begin:finish].strip() == wanted:
            begin, finish = other.arguments[take]
            text = ctx.data[begin:finish].strip()
            found = text if _NAME.fullmatch(text) else None
    return found


def _attribute(ctx: RuleContext, call) -> str:
    """Argument 1 of a call when it is a plain name (the attribute of a descriptor's
    Set/GetAttribute), else ''."""
    if len(call.arguments) < 2:
        return ""
    begin, finish = call.arguments[1]
    text = ctx.code[begin:finish].strip()
    return text.decode() if _IDENTIFIER.fullmatch(text) else ""


_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_ADDRESS_OF = re.compile(rb"&\s*([A-Za-z_]\w*)")
_LAST_NAME = re.compile(rb"[A-Za-z_]\w*\Z")
_WRAPPED_CALL_HEAD = re.compile(rb"[A-Za-z_]\w*\s*\(\s*\Z")
_WRAPPED_CALL_TAIL = re.compile(rb"\s*\)\s*;")


def _folded(ctx: RuleContext, call, rewrite, start: int, end: int) -> Diagnostic:
    """A ``fold_into`` row (value ``ATTRIBUTE FUNCTION TAKE PARAMETER TYPE``): the call sets a
    descriptor attribute the HIP library takes only as argument TAKE (PARAMETER, of CUDA type
    TYPE) of FUNCTION, the call that creates the descriptor. Where that call is the last one
    before, in the same block, creating this descriptor, and the value is a variable declared
    before it and not written between, its value goes there and this call goes (ARG001); else
    ARG002 marks the call with what to do."""
    tables = ctx.tables
    attribute, source, take, parameter, value_type = rewrite.value.split()
    take = int(take)
    cuda = rewrite.cuda
    creator = tables.names[source].hip or source
    setters = {cuda.encode(), tables.names[cuda].hip.encode()}
    plan = _fold_plan(ctx, call, start, source, take, value_type, setters)
    if plan is None:
        text = (f"{cuda} with {attribute}: {tables.names[cuda].hip} has no such attribute: pass "
                f"the value as {creator}'s {parameter} (argument {take + 1}) and drop this call")
        return Diagnostic("ARG002", text, start, end,
                          marker_fix(ctx, start, Marker("ARG002", text)), symbol=cuda)
    edits, name = plan
    text = f"{cuda} with {attribute} -> {creator}'s {parameter}"
    title = (f"pass {name} as {creator}'s {parameter} (argument {take + 1}) and drop the "
             f"{attribute} call: {tables.names[cuda].hip} has no such attribute")
    return Diagnostic("ARG001", text, start, end, Fix(title, edits),
                      library=tables.names[cuda].library, symbol=cuda, severity="info")


def _fold_plan(ctx: RuleContext, call, start: int, source: str, take: int, value_type: str,
               setters: set[bytes]) -> tuple[tuple[Edit, ...], str] | None:
    """The edits of a provable fold (see _folded) and the variable folded, or None. Between the
    creation and the call, the descriptor may only be given to ``setters`` (other attributes
    set): a call that used it there (a matmul) would see the creation's value."""
    data, code = ctx.data, ctx.code
    begin, finish = call.arguments[2]
    value = _ADDRESS_OF.fullmatch(code[begin:finish].strip())
    block = _innermost_block(ctx, start)  # the creation must be in it too
    if value is None or block is None:
        return None
    name = value.group(1)
    begin, finish = call.arguments[0]
    descriptor = b"&" + b"".join(code[begin:finish].split())
    entry = ctx.tables.names.get(source)
    names = {source.encode()} | ({entry.hip.encode()} if entry is not None and entry.hip else set())
    creator = None
    for _, found_start, found_end in find_name(ctx, names):
        if found_start >= start:
            break
        other = lexical_call(ctx, found_start, found_end)
        if (block.contains(found_start) and isinstance(other, LexicalCall)
                and len(other.arguments) > take
                and b"".join(code[slice(*other.arguments[0])].split()) == descriptor):
            creator = (found_start, other)
    if creator is None or _innermost_block(ctx, creator[0]) != block:
        return None
    created_at, created = creator
    variable = _LAST_NAME.search(descriptor)  # (desc, this->desc, s.desc)
    if variable is None:
        return None
    for use in re.compile(rb"\b" + variable.group() + rb"\b").finditer(code, created.close, start):
        around = enclosing_call(ctx, use.start(), block.open + 1)
        if around is None or around[0] not in setters:
            return None
    declaration = value_declaration(ctx, name.decode(), start)
    if (declaration is None or declaration.pointers
            or declaration.where is not None and declaration.where[2] > created_at
            or re.compile(rb"\b" + name + rb"\b").search(code, created.close, start)):
        return None  # not known, declared after the creation, or used between (written?)
    folded = name.decode()
    if not _same_type(ctx.tables, declaration.type, value_type):
        folded = f"static_cast<{ctx.tables.names[value_type].hip}>({folded})"
    edits = []
    begin, finish = created.arguments[take]
    if data[begin:finish].strip() != folded.encode():
        begin += len(data[begin:finish]) - len(data[begin:finish].lstrip())
        finish -= len(data[begin:finish]) - len(data[begin:finish].rstrip())
        edits.append(Edit(begin, finish, folded.encode()))
    edits.append(_dropped(ctx, call, start, block))
    return tuple(edits), folded


def _same_type(tables, written: str, value_type: str) -> bool:
    """Is ``written`` the CUDA type ``value_type``, another CUDA name of its HIP type, or that?"""
    hip = tables.names[value_type].hip
    entry = tables.names.get(written)
    return written in (value_type, hip) or entry is not None and entry.hip == hip


def _innermost_block(ctx: RuleContext, offset: int):
    """The innermost brace block around ``offset`` (None at file scope)."""
    inner = None
    for block in blocks(ctx):
        if block.open >= offset:
            break
        if block.contains(offset):
            inner = block
    return inner


def _dropped(ctx: RuleContext, call, start: int, block) -> Edit:
    """The edit that drops a folded call: its whole statement (``call(...);`` or
    ``CHECK(call(...));``), with its line where the statement is alone on it; else, where its
    status is used, the call replaced by the success status it returns."""
    data, code = ctx.data, ctx.code
    statement = statement_start(ctx, start, block.open + 1)
    after = call.close + 1
    if statement != start:
        tail = _WRAPPED_CALL_TAIL.match(code, after)
        if not _WRAPPED_CALL_HEAD.fullmatch(code, statement, start) or tail is None:
            success = ctx.tables.names["CUBLAS_STATUS_SUCCESS"].hip
            return Edit(start, after, success.encode())
        after = tail.end()
    else:
        semicolon = re.compile(rb"\s*;").match(code, after)
        if semicolon is None:
            return Edit(start, after, ctx.tables.names["CUBLAS_STATUS_SUCCESS"].hip.encode())
        after = semicolon.end()
    line_start = data.rfind(b"\n", 0, statement) + 1
    line_end = data.find(b"\n", after)
    line_end = len(data) if line_end == -1 else line_end + 1
    if not data[line_start:statement].strip() and not code[after:line_end].strip():
        return Edit(line_start, line_end, b"")
    return Edit(statement, after, b"")


def _describe(rewrite) -> str:
    if rewrite.action == "wrap_symbol":
        return f"wrap argument {rewrite.arg + 1} in {rewrite.value}()"
    if rewrite.action == "cast":
        return f"cast argument {rewrite.arg + 1} with {rewrite.value}"
    if rewrite.action == "disambiguate":
        return f"cast argument {rewrite.arg + 1} with {_disambiguating_cast(rewrite.value)}"
    if rewrite.action == "append_argument":
        return f"pass {rewrite.value} as argument {rewrite.arg + 1}"
    if rewrite.action == "append_argument_of":
        source, _, take = rewrite.value.split()
        return f"pass {source}'s argument {int(take) + 1} as argument {rewrite.arg + 1}"
    if rewrite.action == "rename":
        return f"call {rewrite.value} with {rewrite.arg} arguments"
    if rewrite.action == "insert_argument":
        return f"insert {rewrite.value} as argument {rewrite.arg + 1}"
    if rewrite.action == "replace_value":
        return f"argument {rewrite.arg + 1} as HIP takes it"
    return f"drop argument {rewrite.arg + 1}"


def _made(ctx: RuleContext, rewrite, edit: Edit) -> str:
    """A change as it was made: a replaced value names both values."""
    if rewrite.action == "replace_value":
        written = ctx.data[edit.start:edit.end].decode("utf-8", "replace").strip()
        return f"argument {rewrite.arg + 1} {written} -> {edit.text.decode()}"
    return _describe(rewrite)


_NAME = re.compile(rb"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")


_CAST = re.compile(r"(?:static|reinterpret|const)_cast<[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*\s*\**\s*>")
# a C cast to a void pointer type, and the operands it takes with no parentheses: a name or its
# address (``(void**)&d_ptr``), member accesses included
_VOID_CAST = re.compile(r"\((?:const\s+)?void\s*(?:\*\s*)+\)")
_PLAIN_OPERAND = re.compile(rb"&?\s*[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*")


def _keeps_syntax(ctx: RuleContext, call, rewrite) -> bool:
    """Can this rewrite not change how the file parses? A name appended to the call's argument
    list, an argument cast to a fundamental type (``disambiguate``), a name argument wrapped in
    a call to a name (``HIP_SYMBOL(sym)``) or in a named cast to a plain type
    (``reinterpret_cast<const void*>(kernel)``), or a name or its address cast to a void pointer
    type (``(void**)&d_ptr``), parse wherever the call did."""
    if rewrite.action in ("append_argument", "append_argument_of"):
        return rewrite.action == "append_argument_of" or rewrite.value.isidentifier()
    if rewrite.action in ("disambiguate", "replace_value"):
        return True  # a C cast to a type of keywords ((int)x, (long long int)(e)); a name
    if rewrite.action in ("wrap_symbol", "cast"):
        begin, finish = call.arguments[rewrite.arg]
        if _VOID_CAST.fullmatch(rewrite.value):
            return _PLAIN_OPERAND.fullmatch(ctx.data, begin, finish) is not None
        if not (rewrite.value.isidentifier() or _CAST.fullmatch(rewrite.value)):
            return False
        return _NAME.fullmatch(ctx.data, begin, finish) is not None
    return False


def _edit(ctx: RuleContext, call, rewrite) -> Edit | None:
    args = call.arguments
    action, value, index = rewrite.action, rewrite.value, rewrite.arg
    if action in ("wrap_symbol", "cast", "disambiguate"):
        if index >= len(args):
            return None
        begin, finish = args[index]
        written = ctx.data[begin:finish]  # written back as it is: a Latin-1 comment stays bytes
        if _ALREADY[action](written.decode("utf-8", "replace"), value):
            return None
        if action == "disambiguate":
            if _declared_exactly(ctx, begin, finish, value):
                return None
            value = _disambiguating_cast(value)
        if value.startswith("(") and _PLAIN_OPERAND.fullmatch(ctx.data, begin, finish):
            return Edit(begin, finish, value.encode() + written)  # (void**)&d_ptr
        if action == "wrap_symbol" and _split_by_macro(ctx.code[begin:finish]):
            written = b"(" + written + b")"  # HIP_SYMBOL((table<float, 4>)): one macro argument
        return Edit(begin, finish, value.encode() + b"(" + written + b")")
    if action == "append_argument":
        if len(args) != index:
            return None
        prefix = ", " if args else ""
        return Edit(call.close, call.close, (prefix + value).encode())
    if action == "append_argument_of":
        taken = _argument_of(ctx, call, value, call.close)
        if len(args) != index or taken is None:
            return None
        return Edit(call.close, call.close, b", " + taken)
    if action == "insert_argument":
        if index > len(args):
            return None
        if index == len(args):
            return Edit(call.close, call.close, ((", " if args else "") + value).encode())
        return Edit(args[index][0], args[index][0], f"{value}, ".encode())
    if action == "remove_argument":
        if index >= len(args) or index == 0:
            return None
        return Edit(args[index - 1][1], args[index][1], b"")
    if action == "replace_value":
        if index >= len(args):
            return None
        begin, finish = args[index]
        replacement = _replacements(value).get(ctx.data[begin:finish].strip().decode(
            "utf-8", "replace"))
        return None if replacement is None else Edit(begin, finish, replacement.encode())
    return None


def _replacements(value: str) -> dict[str, str]:
    """A replace_value row's ``FROM=TO FROM=TO ...`` pairs."""
    return dict(pair.split("=", 1) for pair in value.split())
