"""ATM002: hand-made 16-bit atomics that are not atomic, or that update a 32-bit word."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import find_name, lexical_call
from migrator.semantic.declarations import plain_file
from migrator.semantic.lookup import function_name
from migrator.semantic.scopes import block_opened_at
from migrator.semantic.types import leading_cast, strip_parens

from ..markers import marker_fix
from .operands import (PAIRS, SUPPORT_HEADER, converted_type, helper_available,
                       may_involve_sixteen_bit, operand_of, pointer_operand, sixteen_bit_evidence)

# __hadd(*p, v) and friends -> the helper doing the same atomically
_HALF_ARITHMETIC = {"__hadd": "add", "__hadd2": "add", "__hsub": "sub", "__hsub2": "sub"}
_COMPOUND = {"+=": "add", "-=": "sub"}
_ATOMICS = ("atomicCAS", "atomicExch", "atomicAdd", "atomicSub", "atomicMax", "atomicMin",
            "atomicAnd", "atomicOr", "atomicXor", "atomicCAS_system", "atomicExch_system")
_WIDE_INTEGER = re.compile(r"(?:unsigned\s+)?(?:int|long|long\s+long|long\s+int|long\s+long\s+int)"
                           r"|unsigned|u?int(?:32|64)_t")
_SPACES = re.compile(r"\s+")
_ATOMIC_NAME = re.compile(rb"(?i)atomic")
_STOPS = re.compile(rb"[()\[\]{};]")
_NOT_BLANK = re.compile(rb"\S")


class BrokenHalfAtomic(Rule):
    """Report hand-made 16-bit float atomics that lose updates or write the neighbouring value.

    ## What it does
    Finds, in functions whose name says they are atomic (``safe_atomic_add``,
    ``atomic_add_mixed``...), read-modify-writes of a 16-bit float that are not atomic:
    ``*p = __hadd(*p, v)``, ``p[i] = __hsub(p[i], v)``, ``*p += v`` on a proven ``__half*``/bf16
    pointer, and ``return __hadd(*p, v)``, which never stores the sum at all. Anywhere, it finds
    atomics applied through a cast of a 16-bit float pointer to a 32- or 64-bit integer pointer
    (``atomicCAS((int*)half_ptr, ...)``). Each is reported. With ``lint --fix --unsafe-fixes``
    a plain ``*p = __hadd(*p, v);`` / ``*p += v;`` statement becomes
    ``rocmigrate_atomic_add(p, v);`` (``_sub`` for subtractions), from the generated
    ``rocmigrate_atomics.h``. These are correctness bugs, not optimisations:
    ``convert --no-optimize`` reports them too.

    ## Why is this bad on AMD
    A read-modify-write is three steps: concurrent threads read the same old value and all but
    one of their updates are lost (rocmigrate's helpers, like the native half atomics, lost
    none of ``kernels/atomics.cu``'s 2^21 contended adds on an NVIDIA H200, CUDA 13.0:
    docs/benchmarks.md). A 32-bit CAS over a 16-bit value compares and replaces the value next
    to it too, and is misaligned for values at an address 2 mod 4: the neighbour is corrupted
    or the access faults. This happens on NVIDIA and AMD alike, so the port would carry the bug
    over.

    ## Example
    ```cpp
    __device__ void safe_atomic_add(__half* address, __half val) {
      *address = __hadd(*address, val);
    }
    __device__ void atomic_add_mixed(__half* addr, float grad) {
      float current = __half2float(*addr);
      while (atomicCAS((int*)addr, __float2half_rn(current),
                       __float2half_rn(current + grad)) != current) {
        current = __half2float(*addr);
      }
    }
    ```

    ## Use instead
    ```cpp
    #include "rocmigrate_atomics.h"
    __device__ void safe_atomic_add(__half* address, __half val) {
      rocmigrate_atomic_add(address, val);
    }
    __device__ void atomic_add_mixed(__half* addr, float grad) {
      rocmigrate_atomic_add_mixed(addr, grad);  // one rounding of *addr + grad
    }
    ```

    ## Fix safety
    Unsafe: the statement becomes atomic, which is what the function's name promises, but it is
    slower and a caller that relied on the plain store (one thread per element) pays for
    nothing. ``return __hadd(*p, v)`` returns the sum where atomics return the old value, and
    casted CAS loops must be rewritten as a whole: both are reported only.
    """

    code = "ATM002"
    name = "broken-half-atomic"
    summary = "hand-made 16-bit atomic that loses updates or writes its neighbour"
    family = "atomics"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if not may_involve_sixteen_bit(ctx):
            return  # every pattern it reports is on a 16-bit float
        if re.search(rb"(?i)atomic", data) and _may_read_modify_write(ctx):
            yield from self._read_modify_writes(ctx)
        names = {n.encode() for n in _ATOMICS if n.encode() in data}
        for name, start, end in find_name(ctx, names):
            diagnostic = self._wrong_width(ctx, name.decode(), start, end)
            if diagnostic is not None:
                yield diagnostic

    def _read_modify_writes(self, ctx: RuleContext):
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type != "function_definition":
                stack.extend(node.children)
                continue
            if "atomic" not in function_name(ctx, node).lower():
                continue
            inner = [node.child_by_field_name("body")]
            while inner:
                current = inner.pop()
                if current is None:
                    continue
                if current.type == "assignment_expression":
                    found = self._assignment(ctx, node, current)
                    if found is not None:
                        yield found
                elif current.type == "return_statement":
                    found = self._returned_sum(ctx, node, current)
                    if found is not None:
                        yield found
                inner.extend(current.children)

    def _assignment(self, ctx: RuleContext, function, node) -> Diagnostic | None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        if left is None or right is None or operator is None or not _is_element(left):
            return None
        operator = ctx.text(operator)
        target = _element_type(ctx, left)
        if operator in _COMPOUND:
            if target is None:
                return None  # *p += v on a float or an unknown type: not this rule's business
            operation, operand = _COMPOUND[operator], ctx.text(right)
            shown = f"{ctx.text(left)} {operator} ..."
        elif operator == "=" and right.type == "call_expression":
            arithmetic = ctx.text(right.child_by_field_name("function"))
            operation = _HALF_ARITHMETIC.get(arithmetic)
            args = right.child_by_field_name("arguments")
            args = args.named_children if args is not None else []
            if operation is None or len(args) != 2:
                return None
            lhs = _compact(ctx.text(left))
            if _compact(ctx.text(args[0])) == lhs:
                operand = ctx.text(args[1])
            elif operation == "add" and _compact(ctx.text(args[1])) == lhs:
                operand = ctx.text(args[0])
            else:
                return None
            shown = f"{ctx.text(left)} = {arithmetic}(...)"
        else:
            return None
        name = function_name(ctx, function)
        helper = f"rocmigrate_atomic_{operation}"
        message = (f"{name}: '{shown}' is a read-modify-write, not an atomic: concurrent updates "
                   f"are lost; use {helper} (rocmigrate_atomics.h)")
        if node.parent is not None and node.parent.type == "expression_statement" and (
                target is None or helper_available(target, ctx.settings.rocm)):
            call = f"{helper}({_address(ctx, left)}, {operand})"
            fix = Fix(f"make it atomic with {helper}", (Edit(node.start_byte, node.end_byte,
                                                             call.encode()),),
                      Applicability.UNSAFE, includes=(SUPPORT_HEADER,))
        else:
            fix = marker_fix(ctx, node.start_byte, Marker("ATM002", message))
        return Diagnostic("ATM002", message, node.start_byte, node.end_byte, fix,
                          library="device", symbol=name)

    def _returned_sum(self, ctx: RuleContext, function, node) -> Diagnostic | None:
        value = next((c for c in node.named_children), None)
        if value is None or value.type != "call_expression":
            return None
        arithmetic = ctx.text(value.child_by_field_name("function"))
        args = value.child_by_field_name("arguments")
        if arithmetic not in _HALF_ARITHMETIC or args is None:
            return None
        element = next((a for a in args.named_children if _is_element(a)), None)
        if element is None:
            return None
        name = function_name(ctx, function)
        helper = f"rocmigrate_atomic_{_HALF_ARITHMETIC[arithmetic]}"
        text = (f"{name}: 'return {arithmetic}({ctx.text(element)}, ...)' reads the value and "
                f"never stores the result: the update is lost; use {helper}("
                f"{_address(ctx, element)}, ...) (rocmigrate_atomics.h), which returns the old "
                "value")
        return Diagnostic("ATM002", text, node.start_byte, node.end_byte,
                          marker_fix(ctx, node.start_byte, Marker("ATM002", text)),
                          library="device", symbol=name)

    def _wrong_width(self, ctx: RuleContext, function: str, start: int, end: int):
        call = lexical_call(ctx, start, end)
        if call is None or call == "macro" or not call.arguments:
            return None
        begin, finish = call.arguments[0]
        text = strip_parens(ctx.data[begin:finish].decode("utf-8", "replace"))
        cast = leading_cast(text)
        if cast is None or cast.pointers != 1 or not _WIDE_INTEGER.fullmatch(cast.type):
            return None
        operand = operand_of(ctx, text[cast.end:], begin)
        sixteen = operand.sixteen_bit
        if sixteen in PAIRS:
            return None  # __half2 is 32 bits: a 32-bit atomic on it is the right width
        evidence = f"a {operand.type}*" if sixteen else sixteen_bit_evidence(
            ctx, call.arguments[1:], start)
        if not evidence:
            return None
        bits = 64 if "long long" in cast.type or "64" in cast.type else 32
        helper = "rocmigrate_atomic_cas" if function.startswith("atomicCAS") else \
            "the rocmigrate_atomic_* helper for the 16-bit type"
        message = (f"{function} through ({cast.type}*) on 16-bit floats ({evidence}): a {bits}-bit "
                   "atomic also compares and overwrites the value next to it in the word, and is "
                   f"misaligned for a value at an address 2 mod 4; use {helper}, or "
                   "rocmigrate_atomic_add_mixed to add a float into a __half "
                   "(rocmigrate_atomics.h)")
        return Diagnostic("ATM002", message, start, end,
                          marker_fix(ctx, start, Marker("ATM002", message)), library="device",
                          symbol=function)


def _is_element(node) -> bool:
    """``*p`` or ``p[i]``: one element in memory."""
    if node.type == "subscript_expression":
        return True
    return node.type == "pointer_expression" and node.child_by_field_name("operator") is not None \
        and node.child_by_field_name("operator").type == "*"


def _address(ctx: RuleContext, element) -> str:
    """The address of the element ``*p`` / ``p[i]``: ``p`` / ``&p[i]``."""
    if element.type == "pointer_expression":
        return ctx.text(element.child_by_field_name("argument"))
    return "&" + ctx.text(element)


def _element_type(ctx: RuleContext, element) -> str | None:
    """The 16-bit type (native_atomics.tsv's name) of the element ``*p`` / ``p[i]``, if proven."""
    pointer = element.child_by_field_name("argument")
    if pointer is None:
        return None
    return converted_type(ctx, pointer_operand(ctx, pointer.start_byte, pointer.end_byte))


def _compact(text: str) -> str:
    return _SPACES.sub("", text)



def _may_read_modify_write(ctx: RuleContext) -> bool:
    """A lexical necessary condition for _read_modify_writes finding anything, checked without
    the tree (parsing the file costs far more): a ``+=``/``-=``, or ``__hadd``/``__hsub``
    (the ``=`` and ``return`` forms call one), after a word in code holding "atomic" and
    before the end of what follows it (_atomic_reach): where the tree reads the functions
    where the braces are (plain_file), the body of a function named so."""
    data = ctx.data
    # (searched in the text, comments included: a superset of those in code)
    operators = sorted(at for pattern in (b"+=", b"-=", b"__hadd", b"__hsub")
                       for at in _finds(data, pattern))
    if not operators:
        return False
    if not plain_file(ctx):
        return True
    for name in _ATOMIC_NAME.finditer(ctx.code):  # a function's name is code
        first = bisect.bisect_left(operators, name.end())
        if first < len(operators) and operators[first] < _atomic_reach(ctx, name.end()):
            return True
    return False


def _finds(text: bytes, pattern: bytes):
    at = text.find(pattern)
    while at != -1:
        yield at
        at = text.find(pattern, at + 1)


def _atomic_reach(ctx: RuleContext, start: int) -> int:
    """How far a function definition whose name holds the text before ``start`` can reach:
    past its parameters and qualifiers (bracketed groups; a ``)`` or ``]`` closing one opened
    before is passed), then past its body and a constructor's brace initializers (``{...}``
    groups followed by ``,``, ``{`` or ``catch``), up to a ``;`` outside brackets or the ``}``
    of the enclosing block (directives skipped)."""
    code = ctx.code
    depth = 0
    position = start
    while True:
        found = _STOPS.search(code, position)
        if found is None:
            return len(code)
        at = found.start()
        position = at + 1
        if ctx.in_directive(at):
            continue
        byte = code[at]
        if byte == 123:  # '{'
            block = block_opened_at(ctx, at)
            if block is None:
                return len(code)  # not a block the scan knows: no end proven
            position = block.close + 1
            if depth == 0:
                following = _NOT_BLANK.search(code, position)
                if following is None or not code.startswith((b",", b"{", b"catch"),
                                                             following.start()):
                    return position
        elif byte == 125:  # '}' closing the enclosing block
            return at
        elif byte in b"([":
            depth += 1
        elif byte in b")]":
            depth = max(0, depth - 1)
        elif depth == 0:  # ';'
            return at
