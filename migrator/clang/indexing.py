"""How far a kernel indexes each pointer parameter, as terms of its launch and scalar values.

``read_indexing(reader, function, parameters)`` walks one (instantiated) kernel body as libclang
gives it and records, for every pointer parameter, the index expression of each element it
touches (``p[i]``, ``*(p + i)``, ``&p[i]``, ``p + i`` passed on, through local pointers such as
``T *row = p + r * n``) as a ``Term``: a small expression tree over constants, the kernel's
scalar parameters and ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, where a local
variable is replaced by its definition, a ``for`` variable by the range its header gives it, and
a variable tested by an enclosing ``if``, ``?:`` or an early ``return`` by that bound
(``if (i < n) p[i] = ...``: ``i <= n - 1``). Whatever it cannot follow (a data-dependent index,
a variable assigned in a loop, the pointer passed whole to a call, cast to another element type)
makes that buffer's reading ``complete = False``: its known indexes are then a lower bound only.

The subscripts of the body's ``__shared__`` arrays of constant dimensions are read the same way,
each against its dimension (``capacity``): a launch whose block overflows one is wrong for it;
and those of its ``extern __shared__`` arrays (``element_size``): what they reach is the dynamic
shared memory a launch needs.

``interval(term, values)`` evaluates a term over a launch and scalar values as the interval of
integers it may take; ``BufferIndexing.extent`` the elements a buffer needs (largest index + 1).
"""

from __future__ import annotations

import ctypes
import functools
import math
from dataclasses import dataclass

INFINITY = math.inf
Term = tuple  # ("c", v) | ("p", name) | ("b", builtin, axis) | ("?",) | (op, term, ...)
UNKNOWN: Term = ("?",)
_BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_MIN_CALLS = frozenset({"min", "umin", "fminf", "llmin", "ullmin", "std::min", "__min"})
_MAX_CALLS = frozenset({"max", "umax", "fmaxf", "llmax", "ullmax", "std::max", "__max"})
_MUL_CALLS = frozenset({"__mul24", "__umul24"})
_CASTS = frozenset({"CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR",
                    "CXX_REINTERPRET_CAST_EXPR", "CXX_CONST_CAST_EXPR"})
_TRANSPARENT = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR"})
_EXITS = frozenset({"RETURN_STMT", "CONTINUE_STMT", "BREAK_STMT"})
_INT_KIND = 1  # CXEval_Int


@dataclass(frozen=True)
class BufferIndexing:
    """The indexes one pointer parameter is used with in the kernel body."""

    name: str
    indexes: tuple[Term, ...]
    complete: bool  # every use of the pointer is one of ``indexes``
    note: str = ""  # why it is not complete
    # a __shared__ array's dimension (name: "tile", its second dimension "tile[1]"): its length;
    # 0 for a pointer parameter
    capacity: int = 0
    # an extern __shared__ array (its size is the launch's dynamic shared memory): the bytes of
    # an element; 0 for anything else
    element_size: int = 0

    def extent(self, values: dict) -> int | None:
        """Elements the buffer needs over ``values`` (see ``interval``): the largest index + 1,
        0 when no index is reached; None when one has no finite upper bound."""
        highest = -1
        for index in self.indexes:
            bounds = interval(index, values)
            if bounds is None:
                continue  # a branch no thread takes
            if bounds[1] == INFINITY:
                return None
            highest = max(highest, int(bounds[1]))
        return highest + 1


def read_indexing(reader, function, parameters) -> tuple[BufferIndexing, ...]:
    """The indexing of each pointer parameter (by name) of ``function``'s body; () without a
    body. ``reader`` gives the operator spellings (``binary_operator``/``unary_operator``)."""
    kinds = reader.cindex.CursorKind
    body = next((child for child in function.get_children()
                 if child.kind == kinds.COMPOUND_STMT), None)
    if body is None:
        return ()
    walk = _Walk(reader, parameters)
    walk.note_modified(body)
    walk.statement(body, {})
    buffers = tuple(BufferIndexing(p.spelling, tuple(dict.fromkeys(walk.indexes[p.hash])),
                                   p.hash not in walk.escaped, walk.escaped.get(p.hash, ""))
                    for p in parameters if p.hash in walk.indexes)
    shared = tuple(BufferIndexing(f"{name}[{dimension}]" if dimension else name,
                                  tuple(dict.fromkeys(indexes)), True, capacity=capacity)
                   for (name, dimension, capacity), indexes in walk.shared_indexes.items())
    dynamic = tuple(BufferIndexing(name, tuple(dict.fromkeys(walk.dynamic_indexes.get(key, ()))),
                                   key not in walk.dynamic_escaped and size > 0,
                                   "" if key not in walk.dynamic_escaped else
                                   "used other than by subscript", element_size=size)
                    for key, (name, size) in walk.dynamic.items())
    return buffers + shared + dynamic


class _Walk:
    """One pass over a body in statement order, with each local variable's term."""

    def __init__(self, reader, parameters):
        self.reader = reader
        self.kinds = reader.cindex.CursorKind
        buffers = [p for p in parameters if p.type.get_canonical().kind.name in (
            "POINTER", "INCOMPLETEARRAY", "CONSTANTARRAY")]  # double phi[][8][8]: a pointer
        self.scalars = {p.hash: p.spelling for p in parameters if p not in buffers}
        self.indexes: dict[int, list[Term]] = {p.hash: [] for p in buffers}
        self.escaped: dict[int, str] = {}
        self.aliases: dict[int, tuple[int, Term]] = {}  # local pointer -> (parameter, offset)
        self.shared: dict[int, tuple[str, tuple[int, ...]]] = {}  # __shared__ arrays: dimensions
        self.shared_indexes: dict[tuple[str, int, int], list[Term]] = {}
        self.dynamic: dict[int, tuple[str, int]] = {}  # extern __shared__: element size
        self.dynamic_indexes: dict[int, list[Term]] = {}
        self.dynamic_escaped: set[int] = set()
        self.modified: dict[int, str] = {}  # local variables written after their declaration
        self.generic: dict[int, Term] = {}  # their terms anywhere after it (unrefined)
        self.initial: dict[int, Term] = {}  # local variables: the term of their initialiser
        self._assigned: dict[int, tuple[tuple[int, str], ...]] = {}  # _assignments, by cursor
        self._evaluate = _evaluator(reader.cindex)

    # -- statements (``env``: local variable hash -> term)
    def statement(self, cursor, env: dict) -> bool:
        """Walk a statement; whether it always leaves the enclosing block (return, continue,
        break)."""
        kind = cursor.kind.name
        if kind == "COMPOUND_STMT":
            env = dict(env)
            for child in cursor.get_children():
                if self.statement(child, env):
                    return True
            return False
        if kind == "DECL_STMT":
            for declaration in cursor.get_children():
                if declaration.kind == self.kinds.VAR_DECL:
                    self._declare(declaration, env)
            return False
        if kind == "IF_STMT":
            children = list(cursor.get_children())
            condition = children[0]
            if condition.kind == self.kinds.DECL_STMT:  # if (int x = ...)
                self.statement(condition, env)
                return False
            self.expression(condition, env)
            then_exits = self.statement(children[1], self.refine(env, condition, True)) \
                if len(children) > 1 else False
            else_exits = self.statement(children[2], self.refine(env, condition, False)) \
                if len(children) > 2 else False
            self._forget_assigned(cursor, env)
            if then_exits and not else_exits:
                env.update(self.refine(env, condition, False))
            elif else_exits and not then_exits:
                env.update(self.refine(env, condition, True))
            return then_exits and else_exits
        if kind == "FOR_STMT":
            self._for(cursor, env)
            self._forget_assigned(cursor, env)
            return False
        if kind == "WHILE_STMT":
            self._forget_assigned(cursor, env)  # the condition is tested after the body too
            children = list(cursor.get_children())
            self.expression(children[0], env)
            if len(children) > 1:
                self.statement(children[1], self.refine(env, children[0], True))
            self._forget_assigned(cursor, env)
            return False
        if kind in _EXITS:
            for child in cursor.get_children():
                self.expression(child, env)
            return True
        if kind.endswith("_STMT"):
            self._forget_assigned(cursor, env)  # loops: what the body changes, from the start
            for child in cursor.get_children():
                self.statement(child, dict(env))
            self._forget_assigned(cursor, env)
            return False
        self.expression(cursor, env)
        self._forget_assigned(cursor, env)
        return False

    def _assignments(self, cursor) -> tuple[tuple[int, str], ...]:
        """(variable hash, "increased" | "assigned") for each local variable ``cursor``'s
        subtree assigns, increments or takes the address of; each subtree walked once (a loop's
        body is asked about before, inside and after the loop)."""
        known = self._assigned.get(cursor.hash)
        if known is None:
            known = self._assigned[cursor.hash] = tuple(self._walk_assignments(cursor))
        return known

    def _walk_assignments(self, cursor):
        for node in cursor.walk_preorder():
            kind = node.kind.name
            children = list(node.get_children()) if kind in (
                "BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR", "UNARY_OPERATOR") else ()
            target, how = None, ""
            if kind != "UNARY_OPERATOR" and len(children) == 2:
                operator = self.reader.binary_operator(node, children[0])
                if operator.endswith("=") and operator not in _COMPARISONS:
                    target = children[0]
                    how = "increased" if operator in ("+=", "*=", "<<=") else "assigned"
            elif kind == "UNARY_OPERATOR" and children:
                operator = self.reader.unary_operator(node, children[0])
                if operator in ("++", "--", "&"):
                    target = children[0]
                    how = "increased" if operator == "++" else "assigned"
            if target is not None:
                target = _strip(target)
                if target.kind.name == "DECL_REF_EXPR" and target.referenced is not None:
                    yield target.referenced.hash, how

    def note_modified(self, body) -> None:
        """Record the local variables the body assigns or increments after their declaration:
        their terms are unknown, but for one only ever increased (``i += stride``): at least
        its first value."""
        for variable, how in self._assignments(body):
            previous = self.modified.get(variable)
            self.modified[variable] = how if previous in (None, how) else "assigned"

    def _forget_assigned(self, cursor, env: dict) -> None:
        """After a statement: the variables it may have changed lose their refined terms."""
        for variable, _ in self._assignments(cursor):
            if variable in env:
                env[variable] = self.generic.get(variable, UNKNOWN)

    def _declare(self, declaration, env: dict) -> None:
        if any(child.kind.name == "CUDASHARED_ATTR" for child in declaration.get_children()):
            dimensions, type_ = [], declaration.type.get_canonical()
            if type_.kind.name == "INCOMPLETEARRAY":  # extern __shared__ T s[]: dynamic
                self.dynamic[declaration.hash] = (declaration.spelling,
                                                  max(type_.element_type.get_size(), 0))
                return
            while type_.kind.name == "CONSTANTARRAY":
                dimensions.append(type_.element_count)
                type_ = type_.element_type
            if dimensions:
                self.shared[declaration.hash] = (declaration.spelling, tuple(dimensions))
            return
        initial = next((child for child in declaration.get_children()
                        if child.kind.name not in ("TYPE_REF", "TEMPLATE_REF", "NAMESPACE_REF")
                        and not child.kind.name.endswith("_ATTR")), None)
        if initial is None:
            env[declaration.hash] = self.generic[declaration.hash] = UNKNOWN
            return
        if declaration.type.get_canonical().kind.name == "POINTER":
            target = self.pointer(initial, env)
            if target is not None and declaration.hash not in self.modified:
                self.aliases[declaration.hash] = target
                return
        self.expression(initial, env)
        term = self.initial[declaration.hash] = self.term(initial, env)
        how = self.modified.get(declaration.hash)
        if how == "increased":
            term = ("inc", term)
        elif how is not None:
            term = UNKNOWN
        env[declaration.hash] = self.generic[declaration.hash] = term

    def _for(self, cursor, env: dict) -> None:
        """A for loop's variable takes the range its header gives in the body (``for (int j =
        a; j < b; j += s)``: a .. b - 1; counting down, ``j >= b``: b .. a)."""
        children = list(cursor.get_children())
        body = children[-1] if children else None
        env = dict(env)
        init = children[0] if len(children) == 4 else next(
            (c for c in children[:-1] if c.kind == self.kinds.DECL_STMT), None)
        start, variable = None, None
        if init is not None:
            if init.kind == self.kinds.DECL_STMT:
                declarations = [c for c in init.get_children() if c.kind == self.kinds.VAR_DECL]
                for declaration in declarations:
                    self._declare(declaration, env)
                if len(declarations) == 1:
                    variable = declarations[0].hash
                    start = self.initial.get(variable)
            else:
                self.expression(init, env)
                parts = list(init.get_children())
                if init.kind.name == "BINARY_OPERATOR" and len(parts) == 2 and \
                        self.reader.binary_operator(init, parts[0]) == "=" and \
                        _strip(parts[0]).kind.name == "DECL_REF_EXPR":
                    variable = _strip(parts[0]).referenced.hash
                    start = self.term(parts[1], env)
        if len(children) == 4:
            condition, step = children[1], children[2]
            self._forget_assigned(step, env)  # a variable the step changes, from the start
            if body is not None:
                self._forget_assigned(body, env)
            self.expression(condition, env)
            direction = self._direction(step, variable)
            if body is not None and any(v == variable for v, _ in self._assignments(body)):
                direction = 0  # the body changes it too: the header alone does not bound it
            if variable is not None and start is not None and direction:
                env[variable] = ("inc", start) if direction > 0 else ("dec", start)
            env = self.refine(env, condition, True)
        elif variable is not None:
            env[variable] = UNKNOWN
        if body is not None:
            self.statement(body, env)

    def _direction(self, step, variable) -> int:
        """+1: the step only increases the loop variable; -1: only decreases; 0: neither or
        not known."""
        children = list(step.get_children())
        if not children or variable is None:
            return 0
        target = _strip(children[0])
        if target.kind.name != "DECL_REF_EXPR" or target.referenced is None or \
                target.referenced.hash != variable:
            return 0
        if step.kind.name == "UNARY_OPERATOR":
            operator = self.reader.unary_operator(step, children[0])
            return {"++": 1, "--": -1}.get(operator, 0)
        operator = self.reader.binary_operator(step, children[0])
        if operator in ("+=", "*=", "<<="):
            return 1
        if operator in ("-=", "/=", ">>="):
            return -1
        return 0

    # -- conditions
    def refine(self, env: dict, condition, holds: bool) -> dict:
        """``env`` where ``condition`` is known to hold (or not)."""
        condition = _strip(condition)
        kind = condition.kind.name
        children = list(condition.get_children())
        if kind == "UNARY_OPERATOR" and children and \
                self.reader.unary_operator(condition, children[0]) == "!":
            return self.refine(env, children[0], not holds)
        if kind != "BINARY_OPERATOR" or len(children) != 2:
            return env
        operator = self.reader.binary_operator(condition, children[0])
        if operator in ("&&", "||"):
            if (operator == "&&") == holds:  # both parts known
                return self.refine(self.refine(env, children[0], holds), children[1], holds)
            return env
        if operator not in _COMPARISONS:
            return env
        if not holds:
            operator = _NEGATED[operator]
        env = dict(env)
        for variable, other, spelled in ((children[0], children[1], operator),
                                         (children[1], children[0], _FLIPPED[operator])):
            variable = _strip(variable)
            if variable.kind.name != "DECL_REF_EXPR" or variable.referenced is None or \
                    variable.referenced.hash not in env:
                continue
            key, bound = variable.referenced.hash, self.term(other, env)
            current = env[key]
            if spelled == "<":
                env[key] = ("le", current, ("-", bound, ("c", 1)))
            elif spelled == "<=":
                env[key] = ("le", current, bound)
            elif spelled == ">":
                env[key] = ("ge", current, ("+", bound, ("c", 1)))
            elif spelled == ">=":
                env[key] = ("ge", current, bound)
            elif spelled == "==":
                env[key] = ("ge", ("le", current, bound), bound)
            else:
                env[key] = ("ne", current, bound)
        return env

    # -- expressions
    def expression(self, cursor, env: dict) -> None:
        """Record the buffer accesses in an expression (whose value is not needed)."""
        kind = cursor.kind.name
        children = list(cursor.get_children())
        if kind == "ARRAY_SUBSCRIPT_EXPR" and len(children) == 2:
            if self._shared_access(cursor, env):
                return
            target = self.pointer(children[0], env)
            if target is not None:
                self._access(target, self.term(children[1], env))
                self.expression(children[1], env)
                return
        elif kind == "UNARY_OPERATOR" and children and \
                self.reader.unary_operator(cursor, children[0]) == "*":
            target = self.pointer(children[0], env)
            if target is not None:
                self._access(target, ("c", 0))
                self._operands(children[0], env)
                return
        elif kind == "BINARY_OPERATOR" and len(children) == 2:
            operator = self.reader.binary_operator(cursor, children[0])
            if operator in ("+", "-") and (target := self.pointer(cursor, env)) is not None:
                self._access(target, ("c", 0))
                self._operands(cursor, env)
                return
            if operator in ("==", "!=") and any(self._is_buffer(c) for c in children):
                return  # a pointer compared (to nullptr): no element touched
            if operator in ("&&", "||"):
                self.expression(children[0], env)
                self.expression(children[1], self.refine(env, children[0], operator == "&&"))
                return
        elif kind == "CONDITIONAL_OPERATOR" and len(children) == 3:
            self.expression(children[0], env)
            self.expression(children[1], self.refine(env, children[0], True))
            self.expression(children[2], self.refine(env, children[0], False))
            return
        elif kind == "DECL_REF_EXPR" and cursor.referenced is not None:
            referenced = cursor.referenced.hash
            if referenced in self.dynamic:  # not a subscript: an alias, a call, a cast
                self.dynamic_escaped.add(referenced)
            if referenced in self.indexes or referenced in self.aliases:
                parameter = self.aliases[referenced][0] if referenced in self.aliases \
                    else referenced
                self.escaped.setdefault(parameter, f"used whole at line {cursor.location.line}")
            return
        elif kind == "MEMBER_REF_EXPR" and children and \
                (target := self.pointer(children[0], env)) is not None:
            self._access(target, ("c", 0))  # p->field
            self._operands(children[0], env)
            return
        elif kind in _CASTS and children and \
                (target := self.pointer(children[-1], env)) is not None and \
                self._element_size(cursor.type) != self._element_size(children[-1].type):
            # (char4 *)(p + i): its elements are not the buffer's, its indexes not in them
            self.escaped.setdefault(target[0], f"cast to {cursor.type.spelling} at line "
                                               f"{cursor.location.line}")
            self._operands(children[-1], env)
            return
        elif kind in ("LAMBDA_EXPR", "BLOCK_EXPR"):
            return self._escape_all(cursor, "used in a lambda")
        for child in children:
            if child.kind.name.endswith("_STMT") and child.kind.name != "COMPOUND_STMT":
                self.statement(child, env)
            else:
                self.expression(child, env)

    def _shared_access(self, cursor, env: dict) -> bool:
        """Record ``tile[a][b]`` of a ``__shared__`` array of constant dimensions: each
        subscript against its own dimension."""
        indexes, node = [], cursor
        while node.kind.name == "ARRAY_SUBSCRIPT_EXPR":
            parts = list(node.get_children())
            if len(parts) != 2:
                return False
            indexes.append(parts[1])
            node = _strip(parts[0])
        if node.kind.name != "DECL_REF_EXPR" or node.referenced is None:
            return False
        if node.referenced.hash in self.dynamic and len(indexes) == 1:
            self.dynamic_indexes.setdefault(node.referenced.hash, []).append(
                self.term(indexes[0], env))
            self.expression(indexes[0], env)
            return True
        if node.referenced.hash not in self.shared:
            return False
        name, dimensions = self.shared[node.referenced.hash]
        for dimension, index in enumerate(reversed(indexes)):
            if dimension < len(dimensions):
                self.shared_indexes.setdefault((name, dimension, dimensions[dimension]),
                                               []).append(self.term(index, env))
            self.expression(index, env)
        return True

    def _operands(self, pointer_expression, env: dict) -> None:
        """The index parts of ``p + i`` (accesses in ``i``), not ``p`` itself."""
        node = _strip(pointer_expression)
        if node.kind.name == "BINARY_OPERATOR":
            for child in node.get_children():
                if self.pointer(child, env) is None:
                    self.expression(child, env)
                else:
                    self._operands(child, env)

    def _escape_all(self, cursor, why: str) -> None:
        for node in cursor.walk_preorder():
            if node.kind.name == "DECL_REF_EXPR" and node.referenced is not None and \
                    node.referenced.hash in self.indexes:
                self.escaped.setdefault(node.referenced.hash, why)

    @staticmethod
    def _element_size(type_) -> int:
        """Bytes of what a pointer (or array) type points to; -1 when not one or unknown."""
        canonical = type_.get_canonical()
        kind = canonical.kind.name
        pointee = canonical.get_pointee() if kind == "POINTER" else \
            canonical.element_type if kind in ("INCOMPLETEARRAY", "CONSTANTARRAY") else None
        return pointee.get_size() if pointee is not None else -1

    def _is_buffer(self, cursor) -> bool:
        node = _strip(cursor)
        return node.kind.name == "DECL_REF_EXPR" and node.referenced is not None and (
            node.referenced.hash in self.indexes or node.referenced.hash in self.aliases)

    def _access(self, target: tuple[int, Term], index: Term) -> None:
        parameter, offset = target
        self.indexes[parameter].append(_plus(offset, index))

    def pointer(self, cursor, env: dict) -> tuple[int, Term] | None:
        """(parameter, offset) when ``cursor`` is a buffer parameter or a pointer into one
        (``p``, ``p + i``, ``&p[i]``, a local alias), with the element type kept; else None."""
        node = _strip(cursor)
        kind = node.kind.name
        children = list(node.get_children())
        if kind == "DECL_REF_EXPR" and node.referenced is not None:
            referenced = node.referenced.hash
            if referenced in self.indexes:
                return referenced, ("c", 0)
            return self.aliases.get(referenced)
        if kind == "BINARY_OPERATOR" and len(children) == 2:
            operator = self.reader.binary_operator(node, children[0])
            if operator not in ("+", "-"):
                return None
            left = self.pointer(children[0], env)
            if left is not None:
                offset = self.term(children[1], env)
                if operator == "-":
                    offset = ("-", ("c", 0), offset)
                return left[0], _plus(left[1], offset)
            right = self.pointer(children[1], env) if operator == "+" else None
            if right is not None:
                offset = self.term(children[0], env)
                return right[0], _plus(right[1], offset)
            return None
        if kind == "UNARY_OPERATOR" and children and \
                self.reader.unary_operator(node, children[0]) == "&":
            inner = _strip(children[0])
            parts = list(inner.get_children())
            if inner.kind.name == "ARRAY_SUBSCRIPT_EXPR" and len(parts) == 2:
                base = self.pointer(parts[0], env)
                if base is not None:
                    index = self.term(parts[1], env)
                    return base[0], _plus(base[1], index)
        return None

    def term(self, cursor, env: dict) -> Term:
        """The term of an integer expression."""
        value = self._evaluate(cursor)
        if value is not None:
            return ("c", value)
        node = cursor
        kind = node.kind.name
        children = list(node.get_children())
        if kind in _TRANSPARENT or kind in _CASTS:
            operands = [c for c in children if c.kind.name not in ("TYPE_REF", "TEMPLATE_REF",
                                                                     "NAMESPACE_REF")]
            return self.term(operands[-1], env) if operands else UNKNOWN
        if kind == "DECL_REF_EXPR" and node.referenced is not None:
            referenced = node.referenced.hash
            if referenced in self.scalars:
                return ("p", self.scalars[referenced])
            if node.spelling == "warpSize":
                return ("r", ("c", 32), ("c", 64))
            return env.get(referenced, UNKNOWN)
        if kind == "MEMBER_REF_EXPR":
            base = next(iter(children), None)
            base = _strip(base) if base is not None else None
            # x; a toolkit's builtin variables are properties, whose member clang leaves unnamed
            spelled = node.spelling or next(
                (token.spelling for token in reversed(list(node.get_tokens()))), "")
            axis = spelled.rsplit("_", 1)[-1]  # x, or __fetch_builtin_x
            if base is not None and base.kind.name == "DECL_REF_EXPR" and \
                    base.spelling in _BUILTINS and axis in ("x", "y", "z"):
                return ("b", base.spelling, axis)
            return UNKNOWN
        if kind == "CALL_EXPR" and node.spelling in ("__fetch_builtin_x", "__fetch_builtin_y",
                                                     "__fetch_builtin_z"):
            return self.term(children[0], env) if children else UNKNOWN
        if kind == "BINARY_OPERATOR" and len(children) == 2:
            operator = self.reader.binary_operator(node, children[0])
            if operator in _ARITHMETIC:
                return (operator, self.term(children[0], env), self.term(children[1], env))
            if operator in _COMPARISONS or operator in ("&&", "||"):
                return ("r", ("c", 0), ("c", 1))
            if operator == ",":
                return self.term(children[1], env)
            return UNKNOWN
        if kind == "UNARY_OPERATOR" and children:
            operator = self.reader.unary_operator(node, children[0])
            if operator == "-":
                return ("-", ("c", 0), self.term(children[0], env))
            if operator == "+":
                return self.term(children[0], env)
            if operator == "!":
                return ("r", ("c", 0), ("c", 1))
            return UNKNOWN
        if kind == "CONDITIONAL_OPERATOR" and len(children) == 3:
            return ("u", self.term(children[1], self.refine(env, children[0], True)),
                    self.term(children[2], self.refine(env, children[0], False)))
        if kind == "CALL_EXPR":
            arguments = list(node.get_arguments())
            name = node.spelling
            if len(arguments) == 2 and (name in _MIN_CALLS or name in _MAX_CALLS or
                                        name in _MUL_CALLS):
                operator = "min" if name in _MIN_CALLS else "max" if name in _MAX_CALLS \
                    else "*"
                return (operator, self.term(arguments[0], env), self.term(arguments[1], env))
        return UNKNOWN


def _plus(offset: Term, index: Term) -> Term:
    """``offset + index``, without a zero offset (a pointer at the buffer's start)."""
    return index if offset == ("c", 0) else ("+", offset, index)


def _strip(cursor):
    """The expression under implicit conversions and parentheses."""
    while cursor is not None and cursor.kind.name in _TRANSPARENT:
        children = list(cursor.get_children())
        if len(children) != 1:
            break
        cursor = children[0]
    return cursor


@functools.lru_cache(maxsize=1)
def _evaluator(cindex):
    """A function giving an integer constant expression's value (None for anything else),
    through libclang's clang_Cursor_Evaluate."""
    lib = cindex.conf.lib
    try:
        evaluate = lib.clang_Cursor_Evaluate
        kind_of, dispose = lib.clang_EvalResult_getKind, lib.clang_EvalResult_dispose
        as_long, is_unsigned = lib.clang_EvalResult_getAsLongLong, \
            lib.clang_EvalResult_isUnsignedInt
        as_unsigned = lib.clang_EvalResult_getAsUnsigned
    except AttributeError:
        return lambda cursor: None
    evaluate.argtypes, evaluate.restype = [cindex.Cursor], ctypes.c_void_p
    for function, result in ((kind_of, ctypes.c_int), (as_long, ctypes.c_longlong),
                             (is_unsigned, ctypes.c_uint), (as_unsigned, ctypes.c_ulonglong),
                             (dispose, None)):
        function.argtypes, function.restype = [ctypes.c_void_p], result

    def value(cursor) -> int | None:
        if not cursor.kind.is_expression() or cursor.kind.name in ("DECL_REF_EXPR",) and \
                cursor.referenced is not None and cursor.referenced.kind.name == "PARM_DECL":
            return None
        result = evaluate(cursor)
        if not result:
            return None
        try:
            if kind_of(result) != _INT_KIND:
                return None
            return int(as_unsigned(result) if is_unsigned(result) else as_long(result))
        finally:
            dispose(result)
    return value


# --- evaluation ----------------------------------------------------------------------------------


def interval(term: Term, values: dict) -> tuple[float, float] | None:
    """The integers ``term`` may take, as (low, high) (either may be infinite), over
    ``values``: ``{"grid": (x, y, z), "block": (x, y, z), "scalars": {name: number}}``; None
    when no value is possible (a branch whose bound excludes every thread)."""
    tag = term[0]
    if tag == "c":
        return (term[1], term[1])
    if tag == "?":
        return (-INFINITY, INFINITY)
    if tag == "p":
        value = values.get("scalars", {}).get(term[1])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not float(value).is_integer():
            return (-INFINITY, INFINITY)
        return (int(value), int(value))
    if tag == "b":
        axis = "xyz".index(term[2])
        grid, block = values.get("grid", (1, 1, 1)), values.get("block", (1, 1, 1))
        return {"threadIdx": (0, block[axis] - 1), "blockIdx": (0, grid[axis] - 1),
                "blockDim": (block[axis], block[axis]),
                "gridDim": (grid[axis], grid[axis])}[term[1]]
    parts = [interval(part, values) for part in term[1:]]
    if any(part is None for part in parts):
        return None
    if tag == "r":
        return _nonempty(parts[0][0], parts[1][1])
    if tag == "u":
        return (min(parts[0][0], parts[1][0]), max(parts[0][1], parts[1][1]))
    if tag == "inc":
        return (parts[0][0], INFINITY)
    if tag == "dec":
        return (-INFINITY, parts[0][1])
    if tag == "le":
        return _nonempty(parts[0][0], min(parts[0][1], parts[1][1]))
    if tag == "ge":
        return _nonempty(max(parts[0][0], parts[1][0]), parts[0][1])
    if tag == "ne":
        (low, high), (other, other_high) = parts
        if other == other_high:
            low, high = low + (low == other), high - (high == other)
        return _nonempty(low, high)
    if tag == "min":
        return (min(parts[0][0], parts[1][0]), min(parts[0][1], parts[1][1]))
    if tag == "max":
        return (max(parts[0][0], parts[1][0]), max(parts[0][1], parts[1][1]))
    return _arithmetic(tag, *parts)


def _nonempty(low: float, high: float) -> tuple[float, float] | None:
    return (low, high) if low <= high else None


def _arithmetic(operator: str, left: tuple, right: tuple) -> tuple[float, float]:
    everything = (-INFINITY, INFINITY)
    (a, b), (c, d) = left, right
    if operator == "+":
        return (a + c, b + d)
    if operator == "-":
        return (a - d, b - c)
    if operator == "*":
        products = [_times(x, y) for x in (a, b) for y in (c, d)]
        return (min(products), max(products))
    if operator == "/":
        if c <= 0 <= d or a == -INFINITY or b == INFINITY and c == INFINITY:
            return everything
        quotients = [_divided(x, y) for x in (a, b) for y in (c, d)]
        return (min(quotients), max(quotients))
    if operator == "%":
        if c < 1:
            return everything
        largest = d - 1
        return (max(a, -largest) if a < 0 else 0, min(b, largest) if b >= 0 else 0)
    if operator in ("<<", ">>") and c == d and 0 <= c < 63:
        factor = 2 ** int(c)
        if operator == "<<":
            return (a * factor, b * factor)
        return (_floor_divided(a, factor), _floor_divided(b, factor))
    if operator == "&" and a >= 0 and c >= 0:
        return (0, min(b, d))
    if operator in ("|", "^") and a >= 0 and c >= 0 and b < INFINITY and d < INFINITY:
        return (0, (1 << int(max(b, d)).bit_length()) - 1)
    return everything


def _times(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0
    return x * y


def _divided(x: float, y: float) -> float:
    if y in (INFINITY, -INFINITY):
        return 0
    if x in (INFINITY, -INFINITY):
        return x if y > 0 else -x
    return int(x / y) if x * y < 0 else x // y


def _floor_divided(x: float, factor: int) -> float:
    return x if x in (INFINITY, -INFINITY) else x // factor
