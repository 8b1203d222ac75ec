"""Types from libclang for the rules whose tree-sitter proof of a type ends in "cannot prove"
(``convert --clang``, ``lint --clang``, or a ``--compile-commands`` file).

One file is parsed once per run, and only when a rule asks about it (``types_for``): as CUDA's
host side, with the arguments ``kernels.clang_arguments`` builds (the shipped CUDA
declarations, the compile command's include paths and defines), and as part of the file that
includes it when another file of its folder does (HeCBench's ``#include "kernels.cu"``). What
clang reads is one preprocessing: the active ``#if`` branches only.

Answers cover the template code the translation unit instantiates: each instantiated body of a
function template (reached from the file's code, also through other templates) is read at the
places of the template's own text, so an expression inside ``template <typename T>`` has one
type per instantiation. Every answer is None where clang cannot vouch for it (libclang missing,
a fatal error, an error inside the function, a declaration clang made up after an unknown
type); nothing here raises.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..fsutil import read_regular
from .check import find_resource_dir
from .kernels import (COMPILE_COMMANDS_LIMIT, ReadOptions, clang_arguments, includer_of,
                      parse_unit)

_QUALIFIER = re.compile(r"\b(?:const|volatile|__restrict__|__restrict|restrict)\b")
_WORDS_SPACE = re.compile(r"\s+")
_DEPENDENT = "type-parameter-"
_DEPENDENT_KINDS = frozenset({"DEPENDENT", "DEPENDENTSIZEDARRAY", "UNEXPOSED"})


@dataclass(frozen=True)
class Declared:
    """A variable's type in one instantiation of the function template it is declared in (the
    only one, with no arguments, outside templates)."""

    arguments: tuple[str, ...]  # the function template's arguments ("float", "32")
    type: str  # canonical ("float[32][33]")
    extents: tuple[int, ...] = ()  # constant array bounds, outermost first


class FileTypes:
    """What libclang knows of the types in one file's text (offsets are bytes of that text)."""

    def __init__(self, path: Path, data: bytes, options: ReadOptions,
                 includer: tuple[Path, bytes] | None = None) -> None:
        """``includer``: the file it is read as part of (``file_types`` finds it), or None."""
        self.path = Path(path)
        self.data = data
        self.note = ""  # why nothing is known ("" when the file was parsed)
        self._unit = None
        self._expressions: dict[tuple[int, int], list] = {}  # extent -> [(context, cursor)]
        self._declarations: dict[int, list] = {}  # name offset -> [(context, cursor)]
        self._specializations: dict[int, list[tuple[str, ...]]] = {}  # template name offset
        self._functions: list[tuple[int, int]] = []  # extents of function definitions
        self._errors: list[int] = []  # offsets of errors in this file
        try:
            self._read(options, includer)
        except Exception as err:  # a libclang that cannot load, a cursor it cannot read
            self.note = f"libclang: {type(err).__name__}: {err}"
            self._unit = None

    # -- answers
    def expression_types(self, begin: int, end: int) -> tuple[str, ...] | None:
        """The canonical type of the expression written at [begin, end), once per instantiation
        of the template around it (once outside templates); None when unknown. Empty when it is
        only in template code the file never instantiates."""
        found = self._at(begin, end)
        return None if found is None else tuple(dict.fromkeys(
            _plain(cursor.type.get_canonical().spelling) for cursor in found))

    def pointee_types(self, begin: int, end: int) -> tuple[str, ...] | None:
        """What the pointer (or array) expression at [begin, end) points to, unqualified and
        canonical (``half`` is ``__half``), once per instantiation; None when unknown or not a
        pointer."""
        found = self._at(begin, end)
        if found is None:
            return None
        pointees = []
        for cursor in found:
            pointee = _pointee(cursor.type.get_canonical())
            if pointee is None:
                return None
            pointees.append(_plain(_QUALIFIER.sub("", pointee.spelling)))
        return tuple(dict.fromkeys(pointees))

    def declared_types(self, offset: int) -> tuple[Declared, ...] | None:
        """The type of the variable whose name is at ``offset``, in each instantiation of the
        function around it; None when unknown."""
        if self._unit is None or self._in_error(offset):
            return None
        found = []
        for context, cursor in self._declarations.get(offset, ()):
            if self._invalid(cursor):
                return None
            canonical = cursor.type.get_canonical()
            if _dependent(canonical):
                continue
            found.append(Declared(context, _plain(canonical.spelling), _extents(canonical)))
        return tuple(dict.fromkeys(found))

    def template_arguments(self, offset: int) -> tuple[tuple[str, ...], ...] | None:
        """The argument lists the translation unit instantiates the function template whose
        name is at ``offset`` with (integral arguments as decimal values); None when unknown."""
        if self._unit is None:
            return None
        return tuple(dict.fromkeys(self._specializations.get(offset, ())))

    def offset(self, line: int, column: int) -> int:
        """The byte offset of a 1-based (line, byte column) of the text."""
        start = 0
        for _ in range(line - 1):
            start = self.data.index(b"\n", start) + 1
        return start + column - 1

    # -- reading
    def _read(self, options: ReadOptions, includer: tuple[Path, bytes] | None) -> None:
        import clang.cindex as cindex

        self.cindex = cindex
        self.kinds = cindex.CursorKind
        self._template_of = cindex.conf.lib.clang_getSpecializedCursorTemplate
        self._invalid_declaration = getattr(cindex.conf.lib, "clang_isInvalidDeclaration", None)
        unit_path = includer[0] if includer else self.path
        arguments = clang_arguments(unit_path, options, _resource_dir())
        try:
            text = self.data.decode("utf-8")
        except UnicodeDecodeError:  # libclang would read other bytes at other offsets
            self.note = "not UTF-8: not given to libclang"
            return
        probes = _explicit_probes(self.data)
        unsaved = [(str(self.path), text + "\n" + "\n".join(probes) + "\n" if probes else text)]
        try:
            unit, _ = parse_unit(cindex, unit_path, arguments, unsaved)  # missing: read as empty
        except cindex.TranslationUnitLoadError as err:
            self.note = f"libclang could not parse the file ({err})"
            return
        self.main = os.path.realpath(self.path)
        self._scope = {self.main, os.path.realpath(unit_path)}
        self._files: dict[str, str] = {}
        for diagnostic in unit.diagnostics:
            location = diagnostic.location
            if diagnostic.severity >= 3 and location.file is not None:
                if diagnostic.severity >= 4:
                    self.note = f"libclang: {diagnostic.spelling}"
                    return
                if self._real(location.file.name) == self.main:
                    self._errors.append(location.offset)
        self._unit = unit
        self._walk(unit.cursor, (), set())

    def _walk(self, cursor, context: tuple[str, ...], entered: set) -> None:
        """Index the file's expressions, variables, function extents and specializations, in
        its own code and in the instantiated bodies of the templates it uses (``context``: the
        template arguments of the instantiation being read)."""
        kinds = self.kinds
        for child in cursor.get_children():
            location = child.location
            if location.file is None or self._real(location.file.name) not in self._scope:
                continue
            kind = child.kind
            here = self._real(location.file.name) == self.main
            if here and kind.is_expression():
                extent = child.extent
                key = (extent.start.offset, extent.end.offset)
                places = self._expressions.setdefault(key, [])
                if not any(seen == context for seen, _ in places):  # the outermost only
                    places.append((context, child))
            elif here and kind == kinds.VAR_DECL:
                self._declarations.setdefault(location.offset, []).append((context, child))
            elif here and not context and kind in (kinds.FUNCTION_DECL, kinds.FUNCTION_TEMPLATE,
                                                   kinds.CXX_METHOD) and child.is_definition():
                self._functions.append((child.extent.start.offset, child.extent.end.offset))
            if kind in (kinds.DECL_REF_EXPR, kinds.CALL_EXPR, kinds.MEMBER_REF_EXPR):
                self._enter(child.referenced, entered)
            self._walk(child, context, entered)

    def _enter(self, referenced, entered: set) -> None:
        """Read the instantiated body of a function template specialization, once."""
        kinds = self.kinds
        if referenced is None or referenced.kind not in (kinds.FUNCTION_DECL, kinds.CXX_METHOD) \
                or referenced.hash in entered:
            return
        template = self._template_of(referenced)
        if template is None:
            return
        entered.add(referenced.hash)
        arguments = _template_arguments(self.cindex, referenced)
        if template.location.file is not None and \
                self._real(template.location.file.name) == self.main and arguments is not None:
            self._specializations.setdefault(template.location.offset, []).append(arguments)
        definition = referenced.get_definition()
        if definition is not None and definition.location.file is not None and \
                self._real(definition.location.file.name) in self._scope:
            self._walk(definition, arguments or (referenced.displayname,), entered)

    def _at(self, begin: int, end: int) -> list | None:
        """The expressions written at [begin, end) whose types clang vouches for, one per
        context (dependent ones left out); None when unknown."""
        if self._unit is None or self._in_error(begin):
            return None
        places = self._expressions.get((begin, end))
        if not places:
            return None
        found = []
        for _, cursor in places:
            if _dependent(cursor.type.get_canonical()):
                continue
            if any(self._invalid(node.referenced) for node in cursor.walk_preorder()
                   if node.kind == self.kinds.DECL_REF_EXPR and node.referenced is not None):
                return None  # a declaration clang made up: an unknown type became int
            found.append(cursor)
        return found

    def _in_error(self, offset: int) -> bool:
        """Is there an error in the function around ``offset`` (or at file scope, outside
        functions, when ``offset`` is there)?"""
        if not self._errors:
            return False
        around = [(start, end) for start, end in self._functions if start <= offset < end]
        if around:
            start, end = min(around, key=lambda extent: extent[1] - extent[0])
            return any(start <= error < end for error in self._errors)
        return any(not any(start <= error < end for start, end in self._functions)
                   for error in self._errors)

    def _invalid(self, declaration) -> bool:
        """Did clang make ``declaration`` up, or its type of a typedef it made up (an unknown
        type read as int), through pointers and arrays?"""
        if self._invalid_declaration is None:
            return False
        if self._invalid_declaration(declaration):
            return True
        type_ = declaration.type
        for _ in range(16):
            named = type_.get_declaration()
            if named is not None and named.kind in (self.kinds.TYPEDEF_DECL,
                                                    self.kinds.TYPE_ALIAS_DECL):
                if self._invalid_declaration(named):
                    return True
                type_ = named.underlying_typedef_type
                continue
            type_ = _pointee(type_)
            if type_ is None:
                return False
        return False

    def _real(self, name: str) -> str:
        known = self._files.get(name)
        if known is None:
            known = self._files[name] = os.path.realpath(name)
        return known


_EXPLICIT = re.compile(rb"\btemplate\s+(?!<)")


def _explicit_probes(data: bytes) -> list[str]:
    """Declarations to append to the text, each naming an explicit instantiation of a function
    template (``template void k<float>(float*);``): libclang's cursors do not show those, its
    references to the specializations they make do."""
    if not _EXPLICIT.search(data):
        return []
    from ..parsing import treesitter

    probes = []
    stack = [treesitter.parse(data).root_node]
    while stack:
        node = stack.pop()
        if node.type == "template_instantiation":
            declarator = node.child_by_field_name("declarator")
            name = declarator.child_by_field_name("declarator") if declarator is not None and \
                declarator.type == "function_declarator" else None
            if name is not None and name.type in ("template_function", "qualified_identifier"):
                scopes = []
                parent = node.parent
                while parent is not None:
                    named = parent.child_by_field_name("name") \
                        if parent.type == "namespace_definition" else None
                    if named is not None:
                        scopes.append(data[named.start_byte:named.end_byte].decode())
                    parent = parent.parent
                qualified = "::".join([*reversed(scopes), data[name.start_byte:name.end_byte]
                                       .decode("utf-8", "replace")])
                probes.append(f"static const void *const __rocmigrate_types_probe_{len(probes)}"
                              f" = (const void *)&{qualified};")
            continue
        stack.extend(node.children)
    return probes


def _template_arguments(cindex, specialization) -> tuple[str, ...] | None:
    """A function specialization's template arguments: types canonical, integral values in
    decimal; None for other kinds (template template arguments, packs)."""
    count = specialization.get_num_template_arguments()
    if count < 0:
        return None
    arguments = []
    for index in range(count):
        kind = specialization.get_template_argument_kind(index)
        if kind == cindex.TemplateArgumentKind.TYPE:
            arguments.append(_plain(
                specialization.get_template_argument_type(index).get_canonical().spelling))
        elif kind == cindex.TemplateArgumentKind.INTEGRAL:
            arguments.append(str(specialization.get_template_argument_value(index)))
        else:
            return None
    return tuple(arguments)


def _dependent(type_) -> bool:
    """Does a canonical type depend on template parameters (code of a template's own text)?"""
    while True:
        if type_.kind.name in _DEPENDENT_KINDS or _DEPENDENT in type_.spelling:
            return True
        inner = _pointee(type_)
        if inner is None:
            return False
        type_ = inner


def _pointee(type_):
    """The type a pointer or array type points to (None for other types)."""
    kind = type_.kind.name
    if kind == "POINTER":
        return type_.get_pointee()
    if kind in ("CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY", "DEPENDENTSIZEDARRAY"):
        return type_.element_type
    return None


def _extents(type_) -> tuple[int, ...]:
    extents = []
    while type_.kind.name == "CONSTANTARRAY":
        extents.append(type_.element_count)
        type_ = type_.element_type
    return tuple(extents)


def _plain(spelling: str) -> str:
    return _WORDS_SPACE.sub(" ", spelling).strip()


@functools.lru_cache(maxsize=1)
def _resource_dir() -> Path | None:
    return find_resource_dir()


def file_types(path: Path, data: bytes, options: ReadOptions) -> FileTypes:
    """``path``'s types, parsed from ``data`` (through the file that includes it, when one of
    its folder does): one parse per text and includer's text (the rounds of a file's fix loop
    ask about the same input; an edited includer is another reading)."""
    includer = includer_of(Path(path)) if options.through_includer else None
    return _file_types(path, data, options, includer)


@functools.lru_cache(maxsize=4)
def _file_types(path: Path, data: bytes, options: ReadOptions,
                includer: tuple[Path, bytes] | None) -> FileTypes:
    return FileTypes(path, data, options, includer)


class ClangSetupError(Exception):
    """--clang cannot be used: the message says why."""


def with_clang(settings, root: Path, compile_commands: Path | None):
    """``settings`` with libclang's types for files whose paths are relative to ``root``
    (``--clang``; a ``--compile-commands`` file gives libclang each file's flags). Raises
    ClangSetupError when libclang cannot be loaded or the file cannot be read."""
    from dataclasses import replace

    try:
        import clang.cindex as cindex

        cindex.conf.lib  # loads the shared library
    except Exception as err:
        raise ClangSetupError(f"--clang needs the libclang package (pip install libclang): "
                              f"{err}") from None
    if compile_commands is not None:
        try:
            read_regular(compile_commands, COMPILE_COMMANDS_LIMIT)
        except OSError as err:
            raise ClangSetupError(f"--compile-commands {compile_commands}: "
                                  f"{err.strerror or err}") from None
        compile_commands = compile_commands.resolve()
    return replace(settings, clang_root=root.resolve(), compile_commands=compile_commands)


# the cached units go before the interpreter tears libclang's module down (their finalizers
# call into it)
atexit.register(_file_types.cache_clear)


def types_for(ctx) -> FileTypes | None:
    """The types of the file a rule context reads (its fix loop's input text), when the run
    uses libclang (``Settings.clang_root``); None otherwise. Parsed on the first call."""
    settings = ctx.settings
    if settings.clang_root is None:
        return None
    origin = ctx.origin.data
    path = Path(settings.clang_root) / ctx.origin.path
    if not path.is_file() and Path(ctx.origin.path).is_file():
        path = Path(ctx.origin.path)  # lint's path of a file outside its root, as given
    options = ReadOptions(compile_commands=settings.compile_commands)
    return file_types(path, origin, options)


def pointee_types_at(ctx, begin: int, end: int) -> tuple[str, ...] | None:
    """``FileTypes.pointee_types`` of the expression at [begin, end) of the context's text
    (offsets of a later round of fixes mapped back to the input's); None when unknown."""
    types = types_for(ctx)
    start, stop = ctx.origin_offset(begin), ctx.origin_offset(end)
    if types is None or start is None or stop is None:
        return None
    return types.pointee_types(start, stop)


def declared_types_at(ctx, offset: int) -> tuple[Declared, ...] | None:
    """``FileTypes.declared_types`` of the variable named at ``offset`` of the context's text."""
    types = types_for(ctx)
    at = ctx.origin_offset(offset)
    if types is None or at is None:
        return None
    return types.declared_types(at)
