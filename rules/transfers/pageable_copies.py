"""XFR005: a loop of copies to or from pageable host memory that XFR001 cannot allocate pinned."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.apitables import ApiTables
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import code_end_before, is_member
from migrator.semantic.constants import constant_value
from migrator.semantic.lookup import pointee, value_declaration
from migrator.semantic.scopes import Loop, loop_around, name_matches, word_matches, word_offsets
from migrator.semantic.spellings import alternation, api_call, api_name, cuda_and_hip, is_hip
from migrator.source import raw_bytes

from ..markers import unproven_fix
from .adjacent_copies import SMALL_COPY_BYTES
from .common import Copy, loop_copies
from .pinned_host import _ALLOCATION

# the host argument as written: a vector's storage (``v.data()``, ``&v[0]``), a member
# (``s.host``, ``s->host``), or a pointer name; each maybe offset (``+ i * n``)
_VECTOR_STORAGE = re.compile(r"\s*(?:(?P<data>[A-Za-z_]\w*)\s*\.\s*data\s*\(\s*\)"
                             r"|&\s*(?P<element>[A-Za-z_]\w*)\s*\[[^\[\]]*\])\s*(?:[+-].*)?",
                             re.DOTALL)
_MEMBER = re.compile(r"\s*&?\s*\(?\s*[A-Za-z_]\w*(?:\s*\[[^\[\]]*\])?\s*(?:\.|->)\s*"
                     r"(?P<member>[A-Za-z_]\w*)\s*(?:[+-].*|\[[^\[\]]*\]\s*)?", re.DOTALL)
_POINTER = re.compile(r"\s*(?:\(\s*[\w\s:*]+\*\s*\)\s*)?&?\s*(?P<name>[A-Za-z_]\w*)\s*"
                      r"(?:[+-].*|\[[^\[\]]*\]\s*)?", re.DOTALL)
_VECTOR_TYPE = re.compile(r"(?:std::)?vector\s*<[^,<>]+>")  # the default allocator: pageable
# what a use of the vector in the registered loop may be: it reads its storage, never moves it
_STORAGE_USE = re.compile(rb"\s*(?:\.\s*(?:data|size|empty|begin|end|cbegin|cend|front|back|at)"
                          rb"\s*\(|\[)")
_LEAVES_LOOP = re.compile(rb"\b(?:return|goto|throw|co_return|longjmp)\b")
_NEW = re.compile(rb"[A-Za-z_]\w*\s*=\s*new\b")
_ALIAS = re.compile(rb"[A-Za-z_]\w*\s*=\s*(?P<target>[A-Za-z_]\w*)\s*;")
_CALLOC = re.compile(rb"[A-Za-z_]\w*\s*=\s*(?:\([^();]*\)|static_cast\s*<[^<>;]*>)?\s*\(?\s*"
                     rb"(?:calloc|realloc|std::malloc|std::calloc)\s*\(")


class PageableCopies(Rule):
    """Report loops of copies to or from pageable host memory the tool cannot allocate pinned.

    ## What it does
    Finds ``hipMemcpy``/``hipMemcpyAsync`` calls in a loop whose host side (from the copy kind)
    is pageable memory that XFR001 cannot allocate pinned: a ``std::vector``'s storage
    (``v.data()``, ``&v[0]``), a buffer the file allocates with ``malloc``, ``calloc`` or
    ``new`` other than by one ``malloc`` in the copy's function (another function's, a member of
    a structure the caller owns, an alias of one), or a parameter of a file that pins nothing. It reports the loop with a marker. For synchronous
    copies of a vector whose declaration is visible (a local declared before the loop, or a
    parameter) and that the loop does not resize, it offers to register the vector's storage
    around the outermost loop it can: ``hipHostRegister((void*)v.data(), v.size() *
    sizeof(v[0]), hipHostRegisterDefault)`` before, ``hipHostUnregister`` after (only if the registration
    succeeded). Elsewhere the message says what to do: register the buffer once where it is
    allocated, or copy through a pinned staging buffer. Loops of copies of a constant size
    under 4 KiB are left to XFR002 (pack them into one transfer).

    ## Why is this bad on AMD
    A copy to or from pageable memory is staged by the runtime through its own pinned buffers,
    chunk by chunk, while pinned memory (``hipHostMalloc``, or ``hipHostRegister``'d) "can be
    read or written with much higher bandwidth than pageable memory" (AMD's HIP runtime API
    reference, ``hipHostMalloc``); and ``hipMemcpyAsync`` on memory that is not pinned "will be
    performed synchronously" (the same reference, ``hipMemcpyAsync``), so copies spread over
    several streams do not overlap (as with CUDA). On an NVIDIA H200 (CUDA 13.0, 2026-11-30;
    docs/benchmarks.md), BERT-large's 391 gradient tensors (1.34 GB) copied one by one device to
    host took 3.7-4.6x as long into pageable memory as into a pinned buffer. No AMD GPU has
    measured it.

    ## Example
    ```cpp
    std::vector<float> grads(total);
    for (int i = 0; i < n; ++i) {
      hipMemcpy(grads.data() + offset[i], d_grads[i], bytes[i], hipMemcpyDeviceToHost);
    }
    ```

    ## Use instead
    ```cpp
    std::vector<float> grads(total);
    bool grads_registered = hipHostRegister((void*)grads.data(), grads.size() * sizeof(grads[0]), hipHostRegisterDefault) == hipSuccess;
    for (int i = 0; i < n; ++i) {
      hipMemcpy(grads.data() + offset[i], d_grads[i], bytes[i], hipMemcpyDeviceToHost);
    }
    if (grads_registered) (void)hipHostUnregister((void*)grads.data());
    ```

    ## Fix safety
    The rewrite is unsafe (applied with ``--unsafe-fixes``), for its cost rather than its
    meaning: registering pins every page of the range each time the code before the loop runs.
    On an NVIDIA H200 (CUDA 13.0, 2026-12-01; docs/benchmarks.md), one step of BERT-large's
    391 per-tensor copies into a ``std::vector`` took 140.8 ms pageable, 126.7 ms registered
    around the loop (the registration of 1.34 GB costs most of the gain) and 27.7 ms registered
    once: there it paid where the registered loop runs many steps, and a buffer that lives long
    is better registered once where it is allocated. No AMD GPU has measured it. Its meaning is kept: the copies stay synchronous, the loop leaves no
    other way than its end (no ``return``, ``goto``, ``throw`` in it), the vector is not
    resized in it, and memory registered before (the registration then fails) is not
    unregistered. Asynchronous copies are only reported: into pinned memory they become truly
    asynchronous, so the host must synchronise before it reads the buffer or unregisters it.
    """

    code = "XFR005"
    name = "pageable-copies"
    summary = "loop copies to or from pageable host memory it cannot allocate pinned"
    family = "transfers"
    fix = "sometimes"
    optimization = True
    chains = True  # the CUDA names it writes are renamed by API001
    # and the memory it registers is what the copy rules read
    chains_into = ("API001", "ARG001", "XFR002", "XFR003")

    def check(self, ctx: RuleContext):
        seen: set[tuple[int, str, str]] = set()  # one finding per buffer and function, one look each
        for copy in loop_copies(ctx):
            if copy.body is None:
                continue
            index = copy.host_argument(ctx)
            if index is None:
                continue
            size = constant_value(ctx, copy.text(ctx, 2)) if len(copy.arguments) > 2 else None
            if size is not None and size < SMALL_COPY_BYTES:
                continue  # XFR002's: pack small copies into one transfer
            text = copy.text(ctx, index)
            written = _VECTOR_STORAGE.fullmatch(text) or _MEMBER.fullmatch(text) or _POINTER.fullmatch(text)
            key = (copy.body.open, written.lastgroup, written.group(written.lastgroup)) if written else None
            if key is None or key in seen:
                continue
            seen.add(key)
            host = _pageable(ctx, copy, text)
            if host is not None:
                yield _report(ctx, copy, index, host)


@dataclass(frozen=True)
class _Host:
    """Pageable host memory a copy reads or writes: its name, and where it comes from."""

    name: str
    origin: str  # as the message says it
    vector: bool = False
    parameter: bool = False


def _pageable(ctx: RuleContext, copy: Copy, text: str) -> _Host | None:
    """The pageable memory behind the host argument ``text``, or None where it is pinned, not
    host memory, XFR001's to allocate pinned, or of unknown origin."""
    storage = _VECTOR_STORAGE.fullmatch(text)
    if storage is not None:
        name = storage.group("data") or storage.group("element")
        declaration = value_declaration(ctx, name, copy.start)
        if (declaration is None or declaration.pointers or _claimed(ctx, name)
                or not _VECTOR_TYPE.fullmatch(declaration.type)):
            return None
        return _Host(name, "a std::vector's storage", vector=True,
                     parameter=declaration.where is None and _is_parameter(ctx, name, copy))
    member = _MEMBER.fullmatch(text)
    if member is not None:
        name = member.group("member")
        if _claimed(ctx, name) or not _allocated(ctx, name.encode(), member=True):
            return None
        return _Host(name, "a member malloc'd or new'd in this file")
    pointer = _POINTER.fullmatch(text)
    if pointer is None:
        return None
    name = pointer.group("name")
    encoded = name.encode()
    if _claimed(ctx, name):
        return None
    body = copy.body
    if len(list(word_matches(ctx, encoded, _ALLOCATION, body.head, body.close))) == 1:
        return None  # XFR001 allocates it pinned, or says why not
    if _allocated(ctx, encoded):
        return _Host(name, "malloc'd or new'd in this file")
    for alias in word_matches(ctx, encoded, _ALIAS, body.head, body.close):
        target = alias.group("target").decode()
        if not _claimed(ctx, target) and _allocated(ctx, alias.group("target")):
            return _Host(name, f"an alias of '{target}', malloc'd or new'd in this file")
    if (not _pins_anything(ctx) and _is_parameter(ctx, name, copy)
            and pointee(ctx, name, copy.start) is not None):  # a pointer to values
        return _Host(name, "a parameter, in a file that pins no memory", parameter=True)
    return None


def _is_parameter(ctx: RuleContext, name: str, copy: Copy) -> bool:
    """Is ``name`` written in the head of the copy's function (a parameter)?"""
    return bool(word_offsets(ctx, name.encode(), copy.body.head, copy.body.open))


def _allocated(ctx: RuleContext, name: bytes, member: bool = False) -> bool:
    """Is the variable ``name`` (or with ``member``, a member of that name) assigned
    ``malloc``/``calloc``/``realloc``/``new`` in the file's code?"""
    return any(is_member(ctx, match.start()) == member
               for pattern in (_ALLOCATION, _CALLOC, _NEW)
               for match in word_matches(ctx, name, pattern, 0, len(ctx.data)))


@dataclass(frozen=True)
class _Calls:
    """The calls this rule reads and writes, in both spellings (from the tables)."""

    claims: re.Pattern  # an allocation or registration that makes ``name`` not pageable host memory
    pins: re.Pattern  # any pinned allocation or registration
    claiming: tuple[bytes, ...]  # the names a match of ``claims`` starts with
    pinning: tuple[bytes, ...]  # and of ``pins``


@functools.lru_cache(maxsize=8)
def _calls(tables: ApiTables) -> _Calls:
    pinning = cuda_and_hip(tables, "cudaMallocHost", "cudaHostAlloc", "cudaHostRegister") | {
        "hipExtHostAlloc", "hipMallocHost", "hipHostAlloc"}
    claiming = pinning | cuda_and_hip(tables, "cudaMalloc", "cudaMallocManaged", "cudaMallocPitch")
    return _Calls(
        claims=re.compile(rb"\b" + alternation(claiming) + rb"\s*\(\s*(?:\(\s*void\s*\*\*?\s*\)\s*|"
                          rb"reinterpret_cast\s*<\s*void\s*\*\*?\s*>\s*\(\s*)?&?\s*(?:"
                          rb"([A-Za-z_]\w*)\s*\.\s*data\s*\(\s*\)"  # a vector's storage
                          rb"|(?:[A-Za-z_]\w*\s*(?:\.|->)\s*)?([A-Za-z_]\w*))"),
        pins=re.compile(rb"\b" + alternation(pinning) + rb"\s*\("),
        claiming=tuple(sorted(name.encode() for name in claiming)),
        pinning=tuple(sorted(name.encode() for name in pinning)))


def _claimed(ctx: RuleContext, name: str) -> bool:
    """Is ``name`` allocated pinned, registered, or allocated on the device anywhere in the
    file (read once per file: the names of every such call)?"""
    names = ctx.cache.get("XFR005.claimed")
    if names is None:
        calls = _calls(ctx.tables)
        names = ctx.cache["XFR005.claimed"] = {
            match.group(1) or match.group(2)
            for match in name_matches(calls.claims, calls.claiming, ctx.data)
            if ctx.in_code(match.start())}
    return name.encode() in names


def _pins_anything(ctx: RuleContext) -> bool:
    """Does the file's code allocate pinned or register any memory (read once per file)?"""
    pins = ctx.cache.get("XFR005.pins")
    if pins is None:
        calls = _calls(ctx.tables)
        pins = ctx.cache["XFR005.pins"] = any(
            ctx.in_code(m.start()) for m in name_matches(calls.pins, calls.pinning, ctx.data))
    return pins


def _report(ctx: RuleContext, copy: Copy, index: int, host: _Host) -> Diagnostic:
    line, _ = ctx.source.position(copy.loop.start)
    direction = "into" if index == 0 else "from"
    asynchronous = copy.name.endswith(b"Async")
    subject = (f"the loop (line {line}) copies {direction} '{host.name}', pageable memory "
               f"({host.origin}): HIP's runtime stages such copies through pinned buffers"
               + ("; an asynchronous copy of pageable memory is synchronous, so streams do not "
                  "overlap it" if asynchronous else "")
               + " (`rocmigrate rule XFR005`)")
    advice = ("register it where it is allocated (hipHostRegister; hipHostUnregister before it "
              "is freed) or copy through a pinned staging buffer")
    rewrite, why_not = None, ""
    if not host.vector:
        why_not = "no rewrite offered: rocmigrate registers only a std::vector, whose size it knows"
    elif asynchronous:
        why_not = "registered, asynchronous copies stop waiting: synchronise before the host reads it"
    else:
        rewrite, why_not = _register(ctx, copy, host)
    if rewrite is not None:
        message = subject + f"; register '{host.name}' around the loop, or " + advice
        return Diagnostic("XFR005", message, copy.start, copy.end,
                          unproven_fix(ctx, copy.start, "XFR005", message, rewrite),
                          library="runtime", symbol=host.name)
    message = subject + f"; {advice} ({why_not})"
    return Diagnostic("XFR005", message, copy.start, copy.end,
                      unproven_fix(ctx, copy.start, "XFR005", message),
                      library="runtime", symbol=host.name)


def _register(ctx: RuleContext, copy: Copy, host: _Host) -> tuple[Fix | None, str]:
    """The rewrite that registers the vector's storage around the outermost loop around the
    copy (in the function, after the vector's declaration), or None and why not."""
    name = host.name
    declaration = value_declaration(ctx, name, copy.start)
    loop = copy.loop
    while True:
        outer = loop_around(ctx, loop.start)
        if outer is None or outer.start < copy.body.open or not _alive_around(declaration, outer):
            break
        loop = outer
    if declaration.where is None and not host.parameter:
        return None, f"'{name}' is not declared in this function"
    if not _alive_around(declaration, loop):
        return None, f"'{name}' is declared inside the loop"
    data = ctx.data
    for use in word_offsets(ctx, name.encode(), loop.start, loop.end):
        if not _STORAGE_USE.match(data, use + len(name)):
            line, _ = ctx.source.position(use)
            return None, f"the loop uses '{name}' otherwise than through its storage (line {line})"
    leaves = _LEAVES_LOOP.search(ctx.code, loop.start, loop.end)
    if leaves is not None:
        return None, f"the loop can leave by '{leaves.group().decode()}'"
    before = ctx.code[code_end_before(ctx, loop.start) - 1 : code_end_before(ctx, loop.start)]
    if before not in (b";", b"{", b"}"):
        return None, "the loop is not a statement of a block"
    flag = f"{name}_registered"
    if word_offsets(ctx, flag.encode(), 0, len(data), code_only=False):
        return None, f"the name '{flag}' is taken"
    hip = is_hip(copy.name)
    storage = f"(void*){name}.data()"  # a const vector's too
    register = api_call(ctx, "cudaHostRegister", [storage, f"{name}.size() * sizeof({name}[0])",
                                                  api_name(ctx, "cudaHostRegisterDefault", hip)], hip)
    unregister = api_call(ctx, "cudaHostUnregister", [storage], hip)
    newline = ctx.source.newline.decode()
    indent = data[ctx.source.line_start(loop.start) : loop.start].decode("utf-8", "replace")
    opening = f"bool {flag} = {register} == {api_name(ctx, 'cudaSuccess', hip)};{newline}{indent}"
    closing = f"{newline}{indent}if ({flag}) (void){unregister};"
    fix = Fix(f"register '{name}' around the loop", (
        Edit(loop.start, loop.start, raw_bytes(opening)),
        Edit(loop.end, loop.end, raw_bytes(closing))), Applicability.UNSAFE)
    return fix, ""


def _alive_around(declaration, loop: Loop) -> bool:
    """Is the declared variable alive over the whole loop: a parameter, or declared before the
    loop in a block that holds it?"""
    if declaration.where is None:
        return True
    block_start, block_end, declared_at = declaration.where
    return declared_at < loop.start and block_start <= loop.start and loop.end <= block_end
