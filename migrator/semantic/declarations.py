"""The declarations of one name in one function, read from the function's tokens, without the
tree.

``lookup`` reads from the tree every parameter and local declaration in the innermost function
definition around an offset; parsing a file costs far more than the rules that ask. This reader
gives the same answer from the function's tokens, but only where it is sure the tree reads the
same: every occurrence of the name in the function must be a declaration whose form it knows
(specifiers, one type, ``*``/``&``/cv, the name, array bounds) or a place where no declarator
can stand (after ``.``, before ``[i] =``, in a call's arguments...). Anything else makes it
answer None, and the caller asks the tree: a form it does not know, a head other than
``specifiers type [*] name(...) {``, a local class, a lambda with template parameters, a
conditional directive in the function, and what makes the parser read functions elsewhere than
the braces are (unpaired braces in the file, a macro invoked among declarations with no ``;``
after it, ``MACRO(i, n) {`` in a body)."""

from __future__ import annotations

import bisect
import itertools
import re

from migrator.rule import RuleContext

from .scopes import Block, block_opens, blocks, function_at
from .types import Declaration, leading_cast, normal_type, strip_parens

_TOKEN = re.compile(rb"[A-Za-z_]\w*|\.?\d(?:[eEpP][+-]|[\w.])*|->\*?|::|\+\+|--|&&|\|\||<<=?|>>=?"
                    rb"|[-+*/%&|^!=<>]=|\.\.\.|\.\*|\S")
# _TOKEN's tokens as one findall returns them (the group), faster: blanks skipped inside the
# match (possessively: no token starts with one) rather than by a failed try of every
# alternative at each blank, and the single bytes that start no longer token (brackets, ';',
# ',') tried second. _TOKEN itself gives the offsets (Function.offset)
_TOKENS = re.compile(rb"\s*+([A-Za-z_]\w*|[^\s\w.\-:+&|<>*/%^!=]|\.?\d(?:[eEpP][+-]|[\w.])*|->\*?"
                     rb"|::|\+\+|--|&&|\|\||<<=?|>>=?|[-+*/%&|^!=<>]=|\.\.\.|\.\*|\S)")
_CONDITIONAL = re.compile(rb"\s*(?:if|ifdef|ifndef|elif|else|endif)\b")
_OPEN = {b"(": b")", b"[": b"]", b"{": b"}"}
_CLOSE = {b")", b"]", b"}"}
_BRACKETS = _OPEN.keys() | _CLOSE
_LOCAL_CLASS = {b"struct", b"class", b"union"}
# a type written with keywords: the tree reads the run as one type node
_SIZES = {b"unsigned", b"signed", b"short", b"long"}
_PRIMITIVES = {b"int", b"char", b"float", b"double", b"bool", b"void", b"wchar_t", b"char16_t",
               b"char32_t"}
# written before a declaration's type, outside the tree's type node
_SPECIFIERS = {b"const", b"volatile", b"static", b"extern", b"register", b"constexpr",
               b"__shared__", b"__device__", b"__constant__", b"__managed__"}
_CV = {b"const", b"volatile"}
_POINTER = {b"*", b"&", b"&&", b"const", b"volatile", b"__restrict__", b"__restrict"}
_FUNCTION_SPECIFIERS = {b"__global__", b"__device__", b"__host__", b"__forceinline__",
                        b"__noinline__", b"static", b"inline", b"__inline__", b"extern",
                        b"constexpr", b"const", b"volatile"}
_HEAD_SPECIFIERS = _FUNCTION_SPECIFIERS | {b"__launch_bounds__"}
# words that never stand in a declaration's specifiers: expressions, statements
_EXPRESSION_WORDS = {b"return", b"throw", b"case", b"co_return", b"co_yield", b"co_await",
                     b"delete", b"new", b"sizeof", b"alignof", b"typeid", b"noexcept", b"this",
                     b"true", b"false", b"nullptr", b"goto", b"default", b"static_assert"}
_CONTROL = {b"if", b"while", b"for", b"switch"}
_TYPE_WORDS = _SIZES | _PRIMITIVES | _SPECIFIERS | _POINTER | _FUNCTION_SPECIFIERS | {b"auto"}
_KEYWORDS = _TYPE_WORDS | _EXPRESSION_WORDS | _CONTROL | {
    b"else", b"do", b"struct", b"class", b"union", b"enum", b"typename", b"template",
    b"operator", b"using", b"typedef", b"decltype", b"namespace", b"try", b"catch", b"public",
    b"private", b"protected", b"friend", b"virtual", b"mutable", b"explicit", b"asm", b"__asm__",
    b"__launch_bounds__", b"__attribute__", b"alignas", b"__align__", b"restrict"}
_TEMPLATE_ARGUMENT = {b"::", b"<", b">", b">>", b",", b"*", b"&"}
_CASTS = {b"static_cast", b"reinterpret_cast", b"const_cast", b"dynamic_cast"}
# after a name (and its subscripts), these make it part of an expression or a type, never the
# name a declarator declares
_NOT_DECLARATOR_AFTER = {b".", b"->", b"+", b"-", b"/", b"%", b"<", b">", b"<=", b">=", b"==",
                         b"!=", b"&&", b"||", b"|", b"^", b"?", b"++", b"--", b"<<", b">>",
                         b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<=", b">>=",
                         b"*", b"&", b"::", b".*", b"->*"}
_MEMBER = {b".", b"->", b"::", b".*", b"->*"}
# at the top level of a clause before the name, these make the clause an expression
_EXPRESSION_TOKENS = {b"=", b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<=",
                      b">>=", b"+", b"-", b"/", b"%", b"!", b"~", b"^", b"|", b"||", b"?", b".",
                      b"->", b"++", b"--", b"==", b"!=", b"<=", b">=", b"<<", b">>", b".*",
                      b"->*"}

_WORD_AFTER_PARENTHESIS = re.compile(rb"\)\s*([A-Za-z_]\w*)")
_CONTAINER = re.compile(rb"\b(?:namespace|struct|class|union|enum)\b")
_WORD_BEFORE = re.compile(rb"([A-Za-z_]\w*)\s*$")
_AFTER_PARAMETERS = {b"const", b"volatile", b"noexcept", b"override", b"final", b"throw",
                     b"mutable", b"try", b"__attribute__"}
_ATTRIBUTES = {b"__attribute__", b"__launch_bounds__", b"alignas", b"__align__", b"__declspec",
               b"decltype", b"__host__", b"__device__"}

USE, UNKNOWN = "use", "unknown"  # an occurrence that declares nothing; one not understood


class Function:
    """A function definition read from its tokens (its head's and body's, directives left out):
    their text and matching bracket's index, its name as written, and the index of its
    parameter list's ``(``. Where a token starts is found when first asked (``offset``): most
    are never asked for."""

    def __init__(self, body: Block, texts: list[bytes], match: list[int], tokens) -> None:
        self.body = body
        self.texts = texts
        self.match = match
        self.name = ""
        self.parameters = 0
        self._tokens = tokens  # the tokens' matches, in order, read as far as asked
        self._offsets: list[int] = []

    def offset(self, index: int) -> int:
        offsets = self._offsets
        while len(offsets) <= index:
            offsets.append(next(self._tokens).start())
        return offsets[index]

    def end(self, index: int) -> int:
        return self.offset(index) + len(self.texts[index])


def function_around(ctx: RuleContext, at: int) -> Function | None:
    """The function definition around ``at``, the innermost as the tree has it, or None where
    the tree may read it differently."""
    body = function_at(ctx, at)
    if body is None or not _plain_file(ctx):
        return None
    functions = ctx.cache.get("declarations.functions")
    if functions is None:
        functions = ctx.cache["declarations.functions"] = {}
    try:
        return functions[body.open]
    except KeyError:
        found = functions[body.open] = _function(ctx, body)
        return found


def declarations(ctx: RuleContext, function: Function, name: str) -> set[Declaration] | None:
    """Every declaration of ``name`` in ``function`` (parameters, locals, lambda parameters),
    as ``lookup`` reads them from the tree, or None where an occurrence of the name is not
    understood."""
    cache = ctx.cache.get("declarations.by_name")
    if cache is None:
        cache = ctx.cache["declarations.by_name"] = {}
    key = (function.body.open, name)
    try:
        return cache[key]
    except KeyError:
        found = cache[key] = _declarations(ctx, function, name.encode())
        return found


def plain_file(ctx: RuleContext) -> bool:
    """Does the tree read the file's functions where the blocks are (see _plain_file)?"""
    return _plain_file(ctx)


def _plain_file(ctx: RuleContext) -> bool:
    """Does the tree read the file's functions where the blocks are? Not where a brace is
    unpaired (``#if`` branches that each open a block), nor where a macro is invoked outside
    functions with no ``;`` after it (``ALIGN(T, 16)`` lines): the parser then reads the code
    after it as one broken declaration, functions included."""
    found = ctx.cache.get("declarations.plain")
    if found is None:
        code = ctx.code
        directives = ctx.directives
        opening, closing = code.count(b"{"), code.count(b"}")
        for start, end in zip(directives.starts, directives.ends):
            opening -= code.count(b"{", start, end + 1)
            closing -= code.count(b"}", start, end + 1)
        found = opening == closing == len(blocks(ctx)) and not _macro_statement(ctx)
        ctx.cache["declarations.plain"] = found
    return found


def _macro_statement(ctx: RuleContext) -> bool:
    """Is a ``)`` among declarations (outside function bodies and other code) followed by a
    word other than the few a declaration or a function head has there (``f() const``,
    ``__attribute__((...)) float x``)?"""
    code = ctx.code
    start = 0
    for block in _code_blocks(ctx):
        for found in _WORD_AFTER_PARENTHESIS.finditer(code, start, block.open):
            if found.group(1) in _AFTER_PARAMETERS or ctx.in_directive(found.start()):
                continue
            opener = _opening_parenthesis(code, found.start())
            before = _WORD_BEFORE.search(code, max(0, opener - 64), opener)
            if before is None or before.group(1) not in _ATTRIBUTES:
                return True
        start = block.close + 1
    return False


def _code_blocks(ctx: RuleContext) -> list[Block]:
    """The outermost blocks that hold code (function bodies, initializer lists) rather than
    declarations (namespaces, classes, ``extern "C"``), in order; then an empty one at the
    end of the file."""
    code = ctx.code
    found: list[Block] = []
    every, opens = blocks(ctx), block_opens(ctx)
    index, count = 0, len(every)
    while index < count:
        block = every[index]
        index += 1
        # the words after the head's last parenthesis or '=' (a head holds no ';{}')
        head, open_at = block.head, block.open
        last = max(code.rfind(b")", head, open_at), code.rfind(b"=", head, open_at))
        tail = code[max(last + 1, head) : open_at]
        if not (_CONTAINER.search(tail) or tail.rstrip().endswith(b"extern")):
            found.append(block)
            # the blocks inside it follow it in the list: passed over at once
            index = bisect.bisect_right(opens, block.close, index)
    return [*found, Block(len(code), len(code), len(code))]


def _opening_parenthesis(code: bytes, closing: int) -> int:
    depth = 0
    for position in range(closing, -1, -1):
        byte = code[position]
        if byte == 41:  # ')'
            depth += 1
        elif byte == 40:  # '('
            depth -= 1
            if depth == 0:
                return position
    return 0


def _function(ctx: RuleContext, body: Block) -> Function | None:
    code = ctx.code
    directives = ctx.directives
    segments = []
    position = body.head
    first = bisect.bisect_left(directives.ends, body.head)
    last = bisect.bisect_right(directives.starts, body.close)
    leading = True  # no token yet: a conditional directive there ends or opens a branch
    # around the whole function (``#endif`` after the previous one), which the tree reads so
    for start, end in zip(directives.starts[first:last], directives.ends[first:last]):
        if leading and not code[position : start - 1].strip():
            if _CONDITIONAL.match(code, start):
                position = end + 1
                continue
        leading = False
        if _CONDITIONAL.match(code, start):
            return None  # its branches may hold other code than the tree reads
        segments.append((position, start - 1))  # up to the '#'
        position = end + 1
    segments.append((position, body.close + 1))
    texts = _TOKENS.findall(code, *segments[0])
    for start, end in segments[1:]:
        texts += _TOKENS.findall(code, start, end)
    if not _LOCAL_CLASS.isdisjoint(texts):
        return None  # a local class: its fields are not declarations, its methods functions
    match = _matches(texts)
    if match is None:
        return None
    function = Function(body, texts, match, itertools.chain.from_iterable(
        _TOKEN.finditer(code, start, end) for start, end in segments))
    if not _head(ctx, function) or _macro_block(texts, match):
        return None
    return function


def _macro_block(texts: list[bytes], match: list[int]) -> bool:
    """Does a block in the body follow ``name(...)`` (``CUDA_KERNEL_LOOP(i, n) {``)? The tree
    reads a function definition there, inside this one."""
    index = match[-1]  # the body's '{'
    while True:
        try:
            index = texts.index(b"{", index + 1)
        except ValueError:
            return False
        if texts[index - 1] == b")":
            before = texts[match[index - 1] - 1]
            if before not in _CONTROL and before not in (b"catch", b"]"):
                return True


def _matches(texts: list[bytes]) -> list[int] | None:
    """For each bracket token the index of the one it pairs with (-1 for other tokens), or
    None where they do not pair, or where a lambda has template parameters."""
    match = [-1] * len(texts)
    stack = []
    for index in list(itertools.compress(itertools.count(), map(_BRACKETS.__contains__, texts))):
        text = texts[index]
        if text in _OPEN:
            stack.append(index)
            continue
        if not stack or _OPEN[texts[stack[-1]]] != text:
            return None
        opening = stack.pop()
        match[opening], match[index] = index, opening
        if text == b"]" and texts[index + 1] == b"<" and _after_brackets(texts, opening) \
                == "parameters":
            return None  # a lambda's template parameters
    return None if stack else match


def _head(ctx: RuleContext, function: Function) -> bool:
    """Does the function's head read, for the tree, as the definition of a function named as
    ``[template<...>] specifiers type [*] name(...) [const] {`` says (``__launch_bounds__(...)``
    among the specifiers or before the name)? Sets its name and parameter list."""
    texts, match = function.texts, function.match
    index = 0
    if texts[:1] == [b"template"]:
        index = _after_angles(texts, 1)
        if index is None:
            return False
    while index < len(texts) and texts[index] in _HEAD_SPECIFIERS:
        if texts[index] == b"__launch_bounds__":
            if texts[index + 1 : index + 2] != [b"("]:
                return False
            index = match[index + 1]
        index += 1
    index = _after_type(texts, index)
    if index is None:
        return False
    while index < len(texts) and texts[index] in (b"*", b"const", b"volatile"):
        index += 1  # not '&': the tree reads no name in a reference declarator
    if texts[index : index + 2] == [b"__launch_bounds__", b"("]:
        index = match[index + 1] + 1
    first = index
    index = _after_name(texts, index)
    if index is None or texts[index : index + 1] != [b"("]:
        return False
    after = match[index] + 1
    if texts[after : after + 1] == [b"const"]:
        after += 1
    if texts[after : after + 1] != [b"{"] or match[after] != len(texts) - 1:
        return False
    function.name = ctx.data[function.offset(first) : function.end(index - 1)].decode(
        "utf-8", "replace")
    function.parameters = index
    return True


def _after_angles(texts: list[bytes], index: int) -> int | None:
    """The index after the ``<...>`` group at ``index``."""
    if texts[index : index + 1] != [b"<"]:
        return None
    depth = 0
    for position in range(index, len(texts)):
        text = texts[position]
        if text in (b"<", b"<<"):
            depth += len(text)
        elif text in (b">", b">>"):
            depth -= len(text)
            if depth == 0:
                return position + 1
            if depth < 0:
                return None
        elif text in (b";", b"{", b"}"):
            return None
    return None


def _after_type(texts: list[bytes], index: int) -> int | None:
    """The index after a type written from ``index``: a run of keywords (``unsigned long``,
    ``float``), or a name, maybe qualified (``a::b``), maybe with template arguments."""
    start = index
    while index < len(texts) and texts[index] in _SIZES:
        index += 1
    if index < len(texts) and (texts[index] in _PRIMITIVES or index == start
                               and texts[index] == b"auto"):
        return index + 1
    if index > start:
        return index
    after = _after_name(texts, index)
    if after is not None and texts[after : after + 1] == [b"<"]:
        return _after_angles(texts, after)
    return after


def _after_name(texts: list[bytes], index: int) -> int | None:
    """The index after a name (``a``, ``a::b``), no keyword, written from ``index``."""
    if index >= len(texts) or not _is_name(texts[index]):
        return None
    index += 1
    while texts[index : index + 1] == [b"::"] and index + 1 < len(texts) \
            and _is_name(texts[index + 1]):
        index += 2
    return index


def _is_word(text: bytes) -> bool:
    return text[:1].isalpha() or text[:1] == b"_"


def _is_name(text: bytes) -> bool:
    return _is_word(text) and text not in _KEYWORDS


def _declarations(ctx: RuleContext, function: Function, name: bytes) -> set[Declaration] | None:
    texts = function.texts
    if name in texts[: function.parameters]:
        return None  # in the head before the parameters: a return type, a template's
    found = set()
    index = function.parameters
    while True:
        try:
            index = texts.index(name, index + 1)
        except ValueError:
            return found
        reading = _occurrence(ctx, function, index)
        if reading is UNKNOWN:
            return None
        if reading is not USE:
            found.add(reading)


def _occurrence(ctx: RuleContext, function: Function, index: int):
    """What the name at token ``index`` is: a Declaration, USE (the tree reads no declaration
    of it there) or UNKNOWN."""
    texts, match = function.texts, function.match
    if texts[index - 1] in _MEMBER:
        return USE
    after = index + 1
    while texts[after] == b"[":
        after = match[after] + 1
    following = texts[after]
    if following in _NOT_DECLARATOR_AFTER:
        return USE
    opener = index - 1
    commas = []  # the top-level commas between the opener and the name, nearest first
    while opener > 0:
        text = texts[opener]
        if text in (b")", b"]"):
            opener = match[opener]
        elif text in _OPEN or text in (b";", b"}"):
            break
        elif text == b",":
            commas.append(opener)
        opener -= 1
    kind = texts[opener]
    if kind == b"(":
        return _in_parentheses(ctx, function, opener, commas, index, following)
    if opener == index - 1:
        return USE  # first in a statement, an element, a subscript: no declarator is
    if kind == b"[":
        return USE  # a subscript, an array bound, a lambda capture
    if kind == b"{":
        block = _block(texts, opener)
        if block is None:
            return UNKNOWN
        if not block:
            return USE  # an initializer list: expressions only
    return _in_statement(ctx, function, opener, index, commas, following)


def _block(texts: list[bytes], opener: int) -> bool | None:
    """Is the ``{`` at ``opener`` a block (True), an initializer list (False), or unknown?"""
    before = texts[opener - 1]
    if before in (b")", b";", b"{", b"}", b"else", b"do", b"try", b"]", b":", b"mutable"):
        return True
    if before in (b"=", b"(", b",", b"return", b"[", b"?") or _is_name(before):
        return False
    return None


def _in_parentheses(ctx, function: Function, opener: int, commas: list[int], index: int,
                    following: bytes):
    context = _paren_context(function, opener)
    if context == "for":
        return _in_statement(ctx, function, opener, index, commas, following, in_for=True)
    if context is None:
        # '(*f)(p)' calls f or declares f with a parameter of type p; anything else unknown
        return USE if opener == index - 1 and function.texts[opener - 1] == b")" else UNKNOWN
    if context == "expression":
        return USE  # an operand, an argument of a call
    start = (commas[0] if commas else opener) + 1
    clause = _top_level(function, start, index)
    if context != "condition" and _lone_angle(clause):
        return UNKNOWN  # 'map<int, float*> p' split at its comma
    if not clause or not _has_specifier_word(clause):
        # a parameter of type p, a condition's operand; after 'T v(' or 'const T (' a
        # parenthesised declarator may follow
        return UNKNOWN if context == "declarator" or clause and context == "parameters" else USE
    if _is_expression(clause):
        return USE  # a default value, an initial value
    if context == "condition" and (commas or following != b"="):
        return UNKNOWN
    if following not in (b",", b")", b"="):
        return UNKNOWN
    return _declarator(ctx, function, start, index) or UNKNOWN


def _paren_context(function: Function, opener: int) -> str | None:
    """What the ``(`` at ``opener`` opens: "parameters" (of this function, a lambda, a catch),
    "declarator" (after ``T v``: a declarator's parameters, or a parenthesised declarator, or
    an initial value), "condition", "for", "expression" (a call's arguments, a parenthesised
    expression, a cast's operand), or None when unknown."""
    texts = function.texts
    before = texts[opener - 1]
    if opener == function.parameters or before == b"catch":
        return "parameters"
    if before == b"for":
        return "for"
    if before in (b"if", b"while", b"switch"):
        return "condition"
    if before in _EXPRESSION_WORDS or before == b"decltype":
        return "expression"
    if before == b"]":
        return _after_brackets(texts, function.match[opener - 1])
    if before == b">":
        return "expression" if _named_cast(texts, opener - 1) else None
    if _is_name(before):
        return _callee_context(function, opener)
    if before in (b"(", b","):
        return "expression" if _in_expression(function, opener) else None
    if before in _TYPE_WORDS or before == b")":
        return None  # 'float (*p)', '(*f)(...)'
    return "expression"  # '= (a * p)'


def _after_brackets(texts: list[bytes], bracket: int) -> str:
    """What a ``(`` after the ``[...]`` at ``bracket`` opens: a lambda's parameters, or a
    call of an element's value."""
    before = texts[bracket - 1]
    if (_is_word(before) and before not in _EXPRESSION_WORDS) or before in (b")", b"]"):
        return "expression"
    return "parameters"


def _named_cast(texts: list[bytes], closing: int) -> bool:
    """Does the ``>`` at ``closing`` end ``static_cast<...>`` (or another named cast)?"""
    depth = 0
    for position in range(closing, -1, -1):
        text = texts[position]
        if text == b">":
            depth += 1
        elif text == b"<":
            depth -= 1
            if depth == 0:
                return position > 0 and texts[position - 1] in _CASTS
        elif text in (b";", b"{", b"}"):
            return False
    return False


def _callee_context(function: Function, opener: int) -> str | None:
    """What the ``(`` after a name at ``opener`` opens: a call's arguments ("expression"), a
    declarator's ("declarator": ``float g(``, ``T v(``), or unknown."""
    texts = function.texts
    position = opener - 1
    while position >= 2 and texts[position - 1] == b"::" and _is_name(texts[position - 2]):
        position -= 2
    before = texts[position - 1]
    if _is_word(before):
        if before in _EXPRESSION_WORDS or before in (b"else", b"do"):
            return "expression"
        return "declarator"
    if before in (b"(", b","):
        # 'f(g(p))' or 'void f(T (*p)[3])': as the enclosing parentheses
        return "expression" if _in_expression(function, position) else None
    if before == b")":
        # 'if (c) f(...)', '(T) f(...)': a call; 'decltype(x) f(...)': unknown
        opening = texts[function.match[position - 1] - 1]
        return "expression" if opening in _CONTROL or not _is_word(opening) else None
    if before in (b"*", b"&", b"&&", b">", b"::", b"]", b"~"):
        return None
    return "expression"


def _in_expression(function: Function, position: int) -> bool:
    """Is the token at ``position`` inside a call's arguments, a condition, a subscript or an
    initializer list (where everything is an expression)?"""
    texts, match = function.texts, function.match
    position -= 1
    while position > 0:
        text = texts[position]
        if text in (b")", b"]"):
            position = match[position]
        elif text == b"(":
            return _paren_context(function, position) in ("expression", "condition")
        elif text == b"[":
            return True
        elif text == b"{":
            return _block(texts, position) is False
        elif text in (b";", b"}"):
            return False
        position -= 1
    return False


def _in_statement(ctx, function: Function, opener: int, index: int, commas: list[int],
                  following: bytes, in_for: bool = False):
    """The name at ``index`` in a statement (or a for loop's first clause) after ``opener``."""
    texts = function.texts
    start = opener + 1
    clause = _top_level(function, start, index)
    if not clause:
        return USE
    if b":" in clause and in_for:
        return USE  # a range-for's range
    if clause[0] in _CONTROL or clause[0] in (b"else", b"do") or b":" in clause:
        if not _has_specifier_word(_after_control(function, start, index)):
            return USE  # 'if (c) *p = v': an expression statement after the condition
        return UNKNOWN  # a declaration as an if's body, after a label: not all in the tree
    if commas:
        return _later_declarator(ctx, function, start, index, commas, following)
    if not _has_specifier_word(clause) or _is_expression(clause):
        return USE
    if _lone_angle(clause) or following not in (b"=", b",", b";", b":"):
        return UNKNOWN
    if following == b":":
        return USE if in_for else UNKNOWN  # a range-for's variable: the tree has no declaration
    if texts[opener] == b";" and _in_for_header(function, opener):
        return UNKNOWN
    return _declarator(ctx, function, start, index) or UNKNOWN


def _later_declarator(ctx, function: Function, start: int, index: int, commas: list[int],
                      following: bytes):
    """The name after a comma in a statement: a declarator after the first (``float a = 0,
    *p;``), in an initial value, or unknown (a comma expression)."""
    texts = function.texts
    type_end = _declaration_type(texts, start, commas[-1])
    if type_end is None or texts[type_end - 1] not in _SIZES | _PRIMITIVES:
        return UNKNOWN
    first = type_end
    while texts[first] in _POINTER:
        first += 1
    if not _is_name(texts[first]):
        return UNKNOWN  # 'float(x), *p': not a declarator first
    last = _top_level(function, commas[0] + 1, index)
    if b"=" in last:
        return USE  # in a declarator's initial value
    if any(text not in _POINTER for text in last) or following not in (b"=", b",", b";"):
        return UNKNOWN
    if texts[start - 1] == b";" and _in_for_header(function, start - 1):
        return UNKNOWN
    return _declarator(ctx, function, start, index, (type_end, commas[0] + 1))


def _in_for_header(function: Function, semicolon: int) -> bool:
    """Is the ``;`` at ``semicolon`` one of a for loop's header?"""
    texts, match = function.texts, function.match
    position = semicolon - 1
    while position > 0:
        text = texts[position]
        if text in (b")", b"]"):
            position = match[position]
        elif text == b"(":
            return True
        elif text in (b"{", b"}", b"["):
            return False
        position -= 1
    return False


def _top_level(function: Function, start: int, end: int) -> list[bytes]:
    """The tokens in [start, end) outside brackets, a bracketed group read as its opener."""
    texts, match = function.texts, function.match
    found = []
    position = start
    while position < end:
        text = texts[position]
        found.append(text)
        position = match[position] + 1 if text in _OPEN else position + 1
    return found


def _after_control(function: Function, start: int, end: int) -> list[bytes]:
    """The top-level tokens of a statement after its leading ``if (...)``, ``else``, ``do``."""
    texts, match = function.texts, function.match
    position = start
    while position < end:
        text = texts[position]
        if text in _CONTROL and texts[position + 1] == b"(":
            position = match[position + 1] + 1
        elif text in (b"else", b"do"):
            position += 1
        else:
            break
    return _top_level(function, position, end)


def _has_specifier_word(clause: list[bytes]) -> bool:
    return any(_is_word(text) and text not in _EXPRESSION_WORDS for text in clause)


def _is_expression(clause: list[bytes]) -> bool:
    """Does the clause hold what no declaration has before its declarator: an operator other
    than ``*``/``&``, an expression keyword, a number, a ``<`` that no ``>`` closes?"""
    depth = 0
    for text in clause:
        if text == b"<":
            depth += 1
        elif text == b">":
            depth -= 1
        elif text == b">>" and depth >= 2:
            depth -= 2  # 'vector<vector<int>>'
        elif depth > 0:
            continue  # a template's arguments: _declarator reads them
        elif text in _EXPRESSION_TOKENS or text in _EXPRESSION_WORDS or text[:1].isdigit() \
                or text[:1] == b".":
            return True
    return depth > 0


def _lone_angle(clause: list[bytes]) -> bool:
    """A ``>`` (or ``>>``) that no ``<`` before it opens: maybe the end of a template's
    arguments split at a comma (``map<int, float*> p``)."""
    depth = 0
    for text in clause:
        if text == b"<":
            depth += 1
        elif text in (b">", b">>"):
            depth -= len(text)
            if depth < 0:
                return True
    return False


def _declaration_type(texts: list[bytes], start: int, end: int) -> int | None:
    """The index just after the type of a declaration starting at ``start`` (specifiers
    skipped), if it ends before ``end``."""
    position = start
    while position < end and texts[position] in _SPECIFIERS:
        position += 1
    type_end = _after_type(texts, position)
    if type_end is None or type_end > end:
        return None
    return type_end


def _declarator(ctx, function: Function, start: int, index: int,
                later: tuple[int, int] | None = None):
    """The Declaration made by the tokens [start, index) and the name at ``index``, read as
    specifiers, a type, cv-qualifiers, ``*``/``&`` and qualifiers, then the name's array
    bounds; ``later`` is (type end, declarator start) for a declarator after the first. None
    when they do not read so; USE for ``auto p = ...`` without a cast (the tree reads no
    declaration there)."""
    texts, match = function.texts, function.match
    type_start = start
    while texts[type_start] in _SPECIFIERS:
        type_start += 1
    if later is None:
        type_end = _declaration_type(texts, start, index)
        if type_end is None:
            return None
        position = type_end
        while position < index and texts[position] in _CV:
            position += 1
    else:
        type_end, position = later
    pointers = 0
    for text in texts[position:index]:
        if text not in _POINTER:
            return None
        pointers += text == b"*"
    after = index + 1
    while texts[after] == b"[":
        pointers += 1
        after = match[after] + 1
    if any(not _is_word(text) and text not in _TEMPLATE_ARGUMENT and not text[:1].isdigit()
           for text in texts[type_start:type_end]):
        return None  # 'a < b && c > *p': not a template's arguments
    data = ctx.data
    type_text = data[function.offset(type_start) : function.end(type_end - 1)]
    shared = b"__shared__" in data[function.offset(start) : function.offset(type_start)]
    if type_text != b"auto":
        return Declaration(normal_type(type_text.decode("utf-8", "replace")), pointers, shared)
    if texts[after] != b"=":
        return None
    value = _value(function, after + 1)
    if value is None:
        return None
    cast = leading_cast(strip_parens(data[value[0] : value[1]].decode("utf-8", "replace")))
    return USE if cast is None else Declaration(cast.type, cast.pointers, shared)


def _value(function: Function, start: int) -> tuple[int, int] | None:
    """The span of the initial value from token ``start`` to a top-level ``,`` or ``;``."""
    texts, match = function.texts, function.match
    position = start
    while texts[position] not in (b",", b";"):
        if texts[position] in _CLOSE:
            return None
        position = match[position] + 1 if texts[position] in _OPEN else position + 1
    if position == start:
        return None
    last = position - 1
    return function.offset(start), function.end(last)
