"""What a harness needs to know about a CUDA file's kernels: each ``__global__`` function with
its template parameters, its parameters' types resolved through typedefs, aliases and
templates, their qualifiers, which pointers the body writes through, and the launch sites
that instantiate it.

Entry point: ``read_kernels(path, options)``. libclang reads the file as CUDA (host side, no
CUDA toolkit needed: a small set of CUDA declarations ships with rocmigrate); where it cannot
(no libclang, a missing header, a parse error in the kernel), each kernel says so in ``note``
and carries what tree-sitter sees instead (``reader == "tree-sitter"``: types as written).

What libclang sees is one preprocessing of the file: the host side (``__CUDA_ARCH__`` is not
defined) with the include paths and defines given, so only the active branch of each ``#if``
is read; a kernel in an inactive branch comes from tree-sitter, which reads every branch. A
header that is not found is read as empty: the kernels that need nothing of it stay clang's,
the others fall back with the error that names what is missing. Template instantiations are
those the file makes: launches (also in the bodies of the host templates the file
instantiates), ``cudaLaunchKernel``-style calls and other references to a specialization, and
explicit instantiations (resolved through a declaration appended to the parse). A file that
another file of its folder includes (``#include "kernels.cu"``, after the names it uses) is
parsed as part of that file, whose launches then count too.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..fsutil import MiB, read_regular
from ..parsing import treesitter
from ..workspace.includes import ANY_PATH, quoted_includes, resolve
from .check import find_resource_dir
from .indexing import BufferIndexing, read_indexing


@dataclass(frozen=True)
class Field:
    """A data member of a struct a kernel takes by value or points to, as clang lays it out."""

    name: str
    type: str  # resolved ("float", "int [4]", "Inner")
    offset: int  # bytes from the start of the struct
    size: int  # bytes (0: unknown, or a bit-field)


@dataclass(frozen=True)
class Parameter:
    """A kernel parameter, for one instantiation of the kernel."""

    name: str  # as declared ("" when unnamed)
    written: str  # the type as written in the declaration ("const T *__restrict__")
    type: str  # resolved: typedefs, aliases and template parameters replaced ("const float *")
    kind: str  # "pointer", "scalar" (arithmetic, enum, bool), "struct" (class by value), "other"
    element: str = ""  # pointers: the resolved pointee type without qualifiers ("float")
    element_size: int = 0  # pointers: sizeof the pointee; scalars/structs: sizeof the type (0: unknown)
    const: bool = False  # pointers: the pointee is const (an input)
    restrict: bool = False  # the pointer is __restrict__
    written_to: bool = False  # pointers: the body (or a device function it passes it to) writes through it
    read_from: bool = True  # pointers: the body reads through it
    fields: tuple[Field, ...] = ()  # structs by value, pointers to structs: the data members


@dataclass(frozen=True)
class Launch:
    """A ``kernel<<<grid, block, shared, stream>>>(args)`` site (or hipLaunchKernelGGL-style)."""

    file: str
    line: int
    template_arguments: tuple[str, ...]  # as resolved at the site ("float", "256"); () if none
    grid: str  # the expressions as written
    block: str
    shared_bytes: str = ""  # "" when not given
    stream: str = ""
    arguments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Instantiation:
    """One set of template arguments the file instantiates the kernel with (the only one, with
    no template arguments, for a plain kernel)."""

    template_arguments: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    launches: tuple[Launch, ...] = ()
    # how far the body indexes each pointer parameter (clang only; () when not read)
    indexing: tuple[BufferIndexing, ...] = ()


@dataclass(frozen=True)
class Kernel:
    name: str
    qualified_name: str  # with namespaces ("ns::scale")
    file: str
    line: int
    template_parameters: tuple[str, ...]  # ("typename T", "int BLOCK")
    parameters: tuple[Parameter, ...]  # as declared (types of a template: written, unresolved)
    instantiations: tuple[Instantiation, ...]
    dynamic_shared: bool = False  # uses extern __shared__ memory
    reader: str = "clang"  # "clang" or "tree-sitter"
    note: str = ""  # why the types come from tree-sitter, or what is unknown


@dataclass(frozen=True)
class ReadOptions:
    include_paths: tuple[Path, ...] = ()
    defines: tuple[str, ...] = ()
    compile_commands: Path | None = None  # a compile_commands.json: its flags for the file win
    cuda_include: Path | None = None  # a CUDA toolkit's include folder; None: shipped declarations
    # a file that another file of its folder includes (#include "kernels.cu") is read as part of
    # that file: its names and the launch sites are there
    through_includer: bool = True
    # the file to read it through (a header in another folder than its includer's); None: the
    # first file of its folder that includes it
    includer: Path | None = None


@dataclass
class KernelReading:
    path: Path
    kernels: list[Kernel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # file-level: libclang missing, parse errors...


_DECLARATIONS = Path(__file__).with_name("cuda_declarations")
# -Wno-register: nvcc takes the storage class C++17 removed, with a warning
_BASE_ARGUMENTS = ("-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-fsyntax-only",
                   "-ferror-limit=0", "-Wno-register")
# headers the file includes that cannot be found are given empty, in this folder that does not
# exist (libclang's unsaved files), so that the kernels that need nothing of them still read
_MISSING = _DECLARATIONS.parent / "missing-headers"
_MISSING_HEADER = re.compile(r"^'(.+)' file not found$")
_MISSING_LIMIT = 8
COMPILE_COMMANDS_LIMIT = 512 * MiB  # the most read of a compile_commands.json
_STANDARD = "-std=c++17"
# what a compile command may carry over: the rest (nvcc's -arch, -O3, -Xcompiler...) is about
# code generation, or unknown to clang
_KEPT_WITH_VALUE = ("-I", "-isystem", "-iquote", "-idirafter", "-D", "-U", "-include")
_NVCC_SPELLINGS = {"--include-path": "-I", "--define-macro": "-D", "--undefine-macro": "-U",
                   "--pre-include": "-include", "--system-include": "-isystem"}
PATH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter", "-include")
_ARITHMETIC = frozenset({
    "BOOL", "CHAR_U", "UCHAR", "CHAR16", "CHAR32", "USHORT", "UINT", "ULONG", "ULONGLONG",
    "UINT128", "CHAR_S", "SCHAR", "WCHAR", "SHORT", "INT", "LONG", "LONGLONG", "INT128", "FLOAT",
    "DOUBLE", "LONGDOUBLE", "HALF", "FLOAT16", "FLOAT128", "BFLOAT16", "ENUM"})
# sizes of fundamental types as written, for kernels tree-sitter reads (LP64)
_FUNDAMENTAL_SIZES = {
    "bool": 1, "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "__half": 2,
    "__nv_bfloat16": 2, "half": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4,
    "uint32_t": 4, "float": 4, "long": 8, "unsigned long": 8, "long long": 8,
    "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "double": 8}
_READ_ONLY_CALLS = frozenset({"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv",
                              "printf", "__builtin_assume_aligned"})
_CASTS = frozenset({"CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_REINTERPRET_CAST_EXPR",
                    "CXX_CONST_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR", "CXX_DYNAMIC_CAST_EXPR"})
# statements that only test or discard a value: a pointer or an element in them is read
_READING_STATEMENTS = frozenset({"IF_STMT", "WHILE_STMT", "DO_STMT", "FOR_STMT", "SWITCH_STMT",
                                 "COMPOUND_STMT", "CASE_STMT", "DEFAULT_STMT"})
_ASSIGNMENTS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="})
_CALLEE_DEPTH = 4  # device functions followed into, for what they do with a pointer
_INCLUDER_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp")
_INCLUDER_LIMIT = 4 * 1024 * 1024  # bytes: larger files are not searched for an #include


def read_kernels(path: Path, options: ReadOptions = ReadOptions()) -> KernelReading:
    """The kernels of the CUDA file ``path`` (never raises on bad input: notes say why)."""
    path = Path(path)
    reading = KernelReading(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        reading.notes.append(f"cannot read {path}: {err.strerror or err}")
        return reading
    if b"\0" in data:
        reading.notes.append(f"{path} is not a text file")
        return reading
    if b"__global__" not in data:
        return reading
    includer = None
    if options.through_includer:
        includer = _given(options.includer) if options.includer is not None else includer_of(path)
    if includer is not None:
        reading.notes.append(f"read as part of {includer[0].name}, which includes it")
    sketch = _sketch(path, data, includer)
    read, why = _clang_kernels(path, data, options, sketch, reading.notes, includer)
    by_place = {(kernel.name, kernel.line): (kernel, unsure) for kernel, unsure in read}
    for drawn in sketch.kernels:
        kernel, unsure = by_place.pop((drawn.name, drawn.line), (None, ""))
        if kernel is None or unsure:
            reason = unsure or why or \
                "libclang does not see it (an inactive #if branch, or a macro)"
            kernel = replace(drawn, note=reason)
        reading.kernels.append(kernel)
    # kernels only clang sees (spelt through macros); unsure ones keep clang's reading
    reading.kernels += [replace(kernel, note=unsure) if unsure else kernel
                        for kernel, unsure in by_place.values()]
    reading.kernels.sort(key=lambda kernel: kernel.line)
    return reading


# ---- libclang -----------------------------------------------------------------------------

def includer_of(path: Path) -> tuple[Path, bytes] | None:
    """The first other source file of ``path``'s folder that includes it by name."""
    try:
        entries = []
        for entry in os.scandir(path.parent):
            if entry.name.endswith(_INCLUDER_SUFFIXES) and entry.is_file():
                stat = entry.stat()
                entries.append((entry.name, stat.st_mtime_ns, stat.st_size))
    except OSError:
        return None
    includer = _local_includes(str(path.parent), tuple(sorted(entries))).get(path.name)
    if includer is None or includer == path.name:
        return None
    try:
        return path.parent / includer, (path.parent / includer).read_bytes()
    except OSError:
        return None


def _given(includer: Path) -> tuple[Path, bytes] | None:
    try:
        return Path(includer), Path(includer).read_bytes()
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def _local_includes(folder: str, entries: tuple) -> dict[str, str]:
    """For a folder's source files (name, mtime, size), which file first includes each path
    beside it with quotes (read once per state of the folder: a harness reads its files one by
    one)."""
    first: dict[str, str] = {}
    for name, _, size in entries:
        if size > _INCLUDER_LIMIT:
            continue
        try:
            data = Path(folder, name).read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue
        for spelled in quoted_includes(data):
            included = resolve(name, spelled, ANY_PATH, folders=())
            if included is not None:
                first.setdefault(included, name)
    return first


def clang_arguments(path: Path, options: ReadOptions, resource_dir: Path | None) -> list[str]:
    """The arguments libclang parses ``path`` with: CUDA's host side, the shipped declarations
    (or ``options.cuda_include``'s toolkit), the include paths and defines of ``options``, then
    the compile command's own include paths, defines and standard when it has one."""
    arguments = list(_BASE_ARGUMENTS)
    if resource_dir is not None:
        arguments += ["-resource-dir", str(resource_dir)]
    command = compile_command_flags(path, options.compile_commands) or []
    if not any(flag.startswith(("-std=", "--std")) for flag in command):
        arguments.append(_STANDARD)
    for include in options.include_paths:
        arguments += ["-I", str(include)]
    arguments += [f"-D{define}" for define in options.defines]
    arguments += command
    if options.cuda_include is not None:
        arguments.remove("-nocudainc")
        arguments.append(f"--cuda-path={Path(options.cuda_include).parent}")
        cccl = Path(options.cuda_include) / "cccl"  # CUDA 13's cub/ and thrust/, which nvcc finds
        if cccl.is_dir():
            arguments += ["-isystem", str(cccl)]
    else:
        arguments += ["-isystem", str(_DECLARATIONS), "-include", "cuda_runtime.h"]
    return arguments


def compile_command_flags(path: Path, compile_commands: Path | None) -> list[str] | None:
    """Include paths, defines, forced includes and the language standard of ``path``'s entry
    in a ``compile_commands.json`` (relative paths made absolute against its directory); None
    when there is no such entry, or no such file."""
    if compile_commands is None:
        return []
    try:
        stat = os.stat(compile_commands)
    except OSError:
        return None
    target = os.path.realpath(path)
    for entry in _compile_commands(os.path.realpath(compile_commands), stat.st_mtime_ns,
                                   stat.st_size):
        if not isinstance(entry, dict) or "file" not in entry:
            continue
        directory = Path(str(entry.get("directory", ".")))
        if os.path.realpath(directory / str(entry["file"])) != target:
            continue
        words = entry.get("arguments")
        if not isinstance(words, list):
            try:
                words = shlex.split(str(entry.get("command", "")))
            except ValueError:
                return []
        return _kept_flags([str(word) for word in words[1:]], directory)
    return None


@functools.lru_cache(maxsize=4)
def _compile_commands(path: str, mtime: int, size: int) -> tuple:
    """The entries of a compile_commands.json, read once per version of the file."""
    try:
        entries = json.loads(read_regular(path, COMPILE_COMMANDS_LIMIT).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return ()
    return tuple(entries) if isinstance(entries, list) else ()


def _kept_flags(words: list[str], directory: Path) -> list[str]:
    kept: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        flag, value = word, None
        if "=" in word and word.split("=", 1)[0] in _NVCC_SPELLINGS:
            flag, value = word.split("=", 1)
        flag = _NVCC_SPELLINGS.get(flag, flag)
        if flag.startswith(("-std=", "--std=")):
            kept.append("-std=" + flag.split("=", 1)[1])
            continue
        if flag in ("-std", "--std") and index < len(words):
            kept.append("-std=" + words[index])
            index += 1
            continue
        for prefix in _KEPT_WITH_VALUE:
            if flag == prefix or (flag.startswith(prefix) and prefix in ("-I", "-D", "-U")):
                if value is None:
                    value = flag[len(prefix):]
                    if not value:
                        if index >= len(words):
                            break
                        value = words[index]
                        index += 1
                if prefix in PATH_FLAGS:
                    value = str(directory / value)
                kept += [prefix, value]
                break
    return kept


def parse_unit(cindex, unit_path: Path, arguments: list[str],
               unsaved: list[tuple[str, str]]) -> tuple[object, list[str]]:
    """libclang's translation unit of ``unit_path``, with each header it includes that is not
    found read as empty (at most _MISSING_LIMIT, retried one by one), and the list of those
    headers. Raises what ``Index.parse`` raises."""
    arguments = arguments + ["-isystem", str(_MISSING)]
    unsaved = list(unsaved)
    missing: list[str] = []
    while True:
        unit = cindex.Index.create().parse(str(unit_path), args=arguments,
                                           unsaved_files=unsaved)
        header = next((match.group(1) for match in (
            _MISSING_HEADER.match(d.spelling) for d in unit.diagnostics if d.severity >= 4)
            if match), None)
        if header is None or header in missing or len(missing) >= _MISSING_LIMIT or \
                os.path.isabs(header):
            return unit, missing
        missing.append(header)
        # "../x.h" is found from a search folder one level down
        folder = _MISSING.joinpath(*["up"] * header.replace("\\", "/").split("/").count(".."))
        arguments += ["-isystem", str(folder)]
        unsaved.append((f"{folder}/{header}", ""))  # as clang joins them: not normalised


def _clang_kernels(path: Path, data: bytes, options: ReadOptions, sketch: _Sketch,
                   notes: list[str], includer: tuple[Path, bytes] | None = None
                   ) -> tuple[list[tuple[Kernel, str]], str]:
    """The kernels libclang reads in ``path`` (parsed as part of ``includer`` when given),
    each with why its reading is unsure ("": it is not), and, when it reads none, why (for
    every kernel's note)."""
    try:
        import clang.cindex as cindex
    except ImportError as err:
        return [], f"libclang is not installed ({err})"
    resource_dir = find_resource_dir()
    if resource_dir is None:
        notes.append("no clang builtin headers found (set ROCMIGRATE_CLANG_RESOURCE_DIR)")
    if compile_command_flags(path, options.compile_commands) is None:
        notes.append(f"{options.compile_commands} has no entry for this file (or cannot be "
                     "read): its flags are not used")
    unit_path, unit_data = includer or (path, data)
    arguments = clang_arguments(unit_path, options, resource_dir)
    probes = _probes(sketch.kernels)
    unsaved = []
    try:
        text = unit_data.decode("utf-8")
        if probes:
            unsaved.append((str(unit_path), text + "\n" + "\n".join(probes) + "\n"))
    except UnicodeDecodeError:
        pass
    try:
        unit, missing = parse_unit(cindex, unit_path, arguments, unsaved)
    except cindex.TranslationUnitLoadError as err:
        return [], f"libclang could not parse the file ({err})"
    except Exception as err:  # a libclang that cannot be loaded (no shared library)
        return [], f"libclang is unusable ({err})"
    if missing:
        notes.append("read without the headers it includes that are not found: " +
                     ", ".join(missing))
    errors, fatal = _errors(unit, unit_path, unit_data.count(b"\n") + 1)
    if fatal:
        return [], f"libclang: {fatal}"
    if errors:
        notes.append(f"libclang: {len(errors)} error(s), first: {errors[0][2]}")
    reader = _ClangReader(cindex, unit, path, data, sketch.launches, includer)
    without = f" (read without {', '.join(missing)}: not found)" if missing else ""
    return [(kernel, unsure + without if unsure else "")
            for kernel, unsure in reader.kernels(errors)], ""


def _errors(unit, path: Path, last_line: int) -> tuple[list[tuple[str, int, str]], str]:
    """(errors as (file, line, text), the first fatal error's text or "") of a parse, without
    those of the probes appended after the file's last line."""
    errors, fatal = [], ""
    main = os.path.realpath(path)
    for diagnostic in unit.diagnostics:
        if diagnostic.severity < 3:
            continue
        location = diagnostic.location
        name = os.path.realpath(location.file.name) if location.file else main
        if name == main and location.line > last_line:
            continue
        where = f"{Path(name).name}:{location.line}: {diagnostic.spelling}"
        if diagnostic.severity >= 4 and not fatal and \
                diagnostic.spelling != "too many errors emitted, stopping now":
            fatal = where
        errors.append((name, location.line, where))
    return errors, fatal


def _probes(sketches: list[Kernel]) -> list[str]:
    """Declarations appended to the file that name each explicit instantiation, so that
    libclang resolves it (libclang's cursors do not show explicit instantiations)."""
    probes = []
    for sketch in sketches:
        for instantiation in sketch.instantiations:
            if instantiation.template_arguments and not instantiation.launches:
                arguments = ", ".join(instantiation.template_arguments)
                probes.append(f"static const void *const __rocmigrate_probe_{len(probes)} = "
                              f"(const void *)&{sketch.qualified_name}<{arguments}>;")
    return probes


class _ClangReader:
    """Kernels, their instantiations and launches, from one translation unit."""

    def __init__(self, cindex, unit, path: Path, data: bytes, launches: list[_WrittenLaunch],
                 includer: tuple[Path, bytes] | None = None):
        self.cindex = cindex
        self.kinds = cindex.CursorKind
        self.unit = unit
        self.path = path
        self.main = os.path.realpath(path)  # where the kernels are defined
        self.data = data
        # the files whose references (launches) count, and their text: the main one and its
        # includer
        self.texts = {self.main: data}
        if includer is not None:
            self.texts[os.path.realpath(includer[0])] = includer[1]
        self.launches = {(os.path.realpath(written.launch.file), written.launch.line,
                          written.column): written for written in launches}
        self._kernel_flags: dict[int, bool] = {}
        self._files: dict[str, str] = {}
        self._sources: dict[str, bytes] = {}  # other files' text, for operators by text
        self._entered: set[int] = set()  # instantiated function templates walked
        self._invalid = getattr(cindex.conf.lib, "clang_isInvalidDeclaration", None)
        # operators by libclang's kinds (LLVM 17+), which macros do not hide; else by the text
        self._binary = _operator_spellings(cindex, "Binary", 33)
        self._unary = _operator_spellings(cindex, "Unary", 13)
        self._template_of = cindex.conf.lib.clang_getSpecializedCursorTemplate
        self._written: dict[tuple[str, int], tuple[bool, bool]] = {}

    # -- finding kernels and what refers to them
    def kernels(self, errors) -> list[tuple[Kernel, str]]:
        definitions, references = [], []
        self._walk(self.unit.cursor, definitions, references)
        uses: dict[str, list] = {}
        for reference, parents in references:
            target = reference.referenced
            template = self._template_of(target)
            key = (template if template is not None and
                   template.kind == self.kinds.FUNCTION_TEMPLATE else target).get_usr()
            uses.setdefault(key, []).append((reference, target, parents))
        return [self._kernel(cursor, uses.get(cursor.get_usr(), []), errors)
                for cursor in definitions]

    def _walk(self, cursor, definitions, references, parents=()):
        """Collect the kernels defined in the file and what refers to them, also in the
        bodies of the function templates the file instantiates (where a launch written
        ``k<T><<<...>>>`` names its template arguments)."""
        kinds = self.kinds
        for child in cursor.get_children():
            location = child.location
            if location.file is None or not self._in_scope(location.file.name):
                continue
            kind = child.kind
            if kind in (kinds.FUNCTION_DECL, kinds.FUNCTION_TEMPLATE):
                if child.is_definition() and self._is_kernel(child) and \
                        self._in_main(location.file.name):
                    definitions.append(child)
            elif kind in (kinds.DECL_REF_EXPR, kinds.CALL_EXPR, kinds.MEMBER_REF_EXPR):
                referenced = child.referenced
                if referenced is not None and referenced.kind == kinds.FUNCTION_DECL and \
                        self._is_kernel(referenced):
                    if kind == kinds.CALL_EXPR or not parents or \
                            not self._is_launch(parents[-1]):
                        references.append((child, parents))
                elif referenced is not None and referenced.kind in (
                        kinds.FUNCTION_DECL, kinds.CXX_METHOD) and \
                        referenced.hash not in self._entered and \
                        self._template_of(referenced) is not None:
                    self._entered.add(referenced.hash)
                    definition = referenced.get_definition()
                    if definition is not None and definition.location.file is not None and \
                            self._in_scope(definition.location.file.name):
                        self._walk(definition, definitions, references)
            self._walk(child, definitions, references, parents + (child,))

    def binary_operator(self, operator, left) -> str:
        if self._binary is not None:
            return self._binary.get(
                self.cindex.conf.lib.clang_getCursorBinaryOperatorKind(operator), "")
        return _binary_operator(self._source(operator), operator, left)

    def unary_operator(self, operator, operand) -> str:
        if self._unary is not None:
            return self._unary.get(
                self.cindex.conf.lib.clang_getCursorUnaryOperatorKind(operator), "")
        return _unary_operator(self._source(operator), operator, operand)

    def _source(self, cursor) -> bytes:
        """The bytes of the file ``cursor`` is in (b"" when it cannot be read)."""
        file = cursor.extent.start.file
        if file is None:
            return b""
        name = self._real(file.name)
        if name in self.texts:
            return self.texts[name]
        if name not in self._sources:
            try:
                self._sources[name] = Path(name).read_bytes()
            except OSError:
                self._sources[name] = b""
        return self._sources[name]

    def _in_main(self, name: str) -> bool:
        return self._real(name) == self.main

    def _in_scope(self, name: str) -> bool:
        return self._real(name) in self.texts

    def _real(self, name: str) -> str:
        known = self._files.get(name)
        if known is None:
            known = self._files[name] = os.path.realpath(name)
        return known

    def _is_kernel(self, cursor) -> bool:
        flag = self._kernel_flags.get(cursor.hash)
        if flag is None:
            flag = any(child.kind == self.kinds.CUDAGLOBAL_ATTR
                       for child in cursor.get_children())
            self._kernel_flags[cursor.hash] = flag
        return flag

    def _is_launch(self, call) -> bool:
        """Whether ``call`` is ``kernel<<<...>>>(...)``: its second child is the call of the
        launch configuration clang makes of the ``<<<...>>>``."""
        if call.kind != self.kinds.CALL_EXPR:
            return False
        children = list(call.get_children())
        return len(children) > 1 and children[1].kind == self.kinds.CALL_EXPR and \
            children[1].spelling in ("__cudaPushCallConfiguration", "cudaConfigureCall")

    # -- one kernel
    def _kernel(self, cursor, uses, errors) -> tuple[Kernel, str]:
        line = cursor.location.line
        template = cursor.kind == self.kinds.FUNCTION_TEMPLATE
        parameters = [child for child in cursor.get_children()
                      if child.kind == self.kinds.PARM_DECL]
        writes = self._parameter_writes(cursor, parameters)
        declared = tuple(self._parameter(p, p.type, writes[i]) for i, p in enumerate(parameters))
        template_parameters = tuple(
            _normal_space(self._text(child)) for child in cursor.get_children()
            if child.kind in (self.kinds.TEMPLATE_TYPE_PARAMETER,
                              self.kinds.TEMPLATE_NON_TYPE_PARAMETER,
                              self.kinds.TEMPLATE_TEMPLATE_PARAMETER))
        notes = []
        by_arguments: dict[tuple[str, ...], tuple[tuple[Parameter, ...], list[Launch]]] = {}
        indexing: dict[tuple[str, ...], tuple[BufferIndexing, ...]] = {}
        if not template:
            by_arguments[()] = (declared, [])
            indexing[()] = read_indexing(self, cursor, parameters)
        for reference, target, parents in uses:
            if template:
                arguments = self._template_arguments(target)
                if arguments is None:
                    notes.append(f"template arguments at line {reference.location.line} "
                                 "not read")
                    continue
                if arguments not in by_arguments:
                    # the instantiated body, where calls the template leaves dependent resolve
                    definition = target.get_definition() or target
                    specialized = list(definition.get_arguments())
                    own = self._parameter_writes(definition, specialized, writes)
                    resolved = tuple(self._parameter(p, p.type, own[i])
                                     for i, p in enumerate(specialized))
                    by_arguments[arguments] = (resolved, [])
                    indexing[arguments] = read_indexing(self, definition, specialized)
            else:
                arguments = ()
            launch = self._launch(reference, parents, arguments)
            found = by_arguments[arguments][1]
            if launch is not None and launch not in found:  # once per instantiated template
                found.append(launch)
        resolved_lines = {launch.line for _, launches in by_arguments.values()
                          for launch in launches}
        notes += [note for line, note in self._dependent_launches(cursor)
                  if line not in resolved_lines]
        if template and not by_arguments:
            notes.append("no instantiation in the file")
        kernel = Kernel(
            name=cursor.spelling, qualified_name=self._qualified_name(cursor),
            file=str(self.path), line=line, template_parameters=template_parameters,
            parameters=declared,
            instantiations=tuple(Instantiation(arguments, resolved, tuple(launches),
                                               indexing.get(arguments, ()))
                                 for arguments, (resolved, launches) in by_arguments.items()),
            dynamic_shared=self._dynamic_shared(cursor, set()), reader="clang",
            note="; ".join(dict.fromkeys(notes)))
        return kernel, self._unsure(cursor, parameters, errors)

    def _unsure(self, cursor, parameters, errors) -> str:
        """Why the kernel's clang reading cannot be trusted ("" when it can): an error inside
        it, or a type its parameters name that clang could not declare."""
        start, end = cursor.extent.start.line, cursor.extent.end.line
        for name, line, text in errors:
            if name == self.main and start <= line <= end:
                return f"libclang: {text}"
        if self._invalid is None:
            return ""
        for parameter in parameters:
            for node in parameter.walk_preorder():
                referenced = node.referenced if node.kind in (self.kinds.TYPE_REF,
                                                              self.kinds.TEMPLATE_REF) else None
                if referenced is not None and self._invalid(referenced):
                    return (f"libclang: the type {referenced.spelling} of parameter "
                            f"{parameter.spelling} is invalid")
        return ""

    def _qualified_name(self, cursor) -> str:
        names = [cursor.spelling]
        parent = cursor.semantic_parent
        while parent is not None and parent.kind != self.kinds.TRANSLATION_UNIT:
            if parent.spelling and parent.kind != self.kinds.LINKAGE_SPEC:
                names.append(parent.spelling)
            parent = parent.semantic_parent
        return "::".join(reversed(names))

    def _template_arguments(self, specialization) -> tuple[str, ...] | None:
        count = specialization.get_num_template_arguments()
        if count < 0:
            return None
        kind = self.cindex.TemplateArgumentKind
        template = self._template_of(specialization)
        parameter_types = [child.type.kind.name for child in template.get_children()
                           if child.kind in (self.kinds.TEMPLATE_TYPE_PARAMETER,
                                             self.kinds.TEMPLATE_NON_TYPE_PARAMETER,
                                             self.kinds.TEMPLATE_TEMPLATE_PARAMETER)]
        arguments = []
        for index in range(count):
            argument_kind = specialization.get_template_argument_kind(index)
            if argument_kind == kind.TYPE:
                arguments.append(_plain_type(
                    specialization.get_template_argument_type(index).get_canonical().spelling))
            elif argument_kind == kind.INTEGRAL:
                value = specialization.get_template_argument_value(index)
                if index < len(parameter_types) and parameter_types[index] == "BOOL":
                    arguments.append("true" if value else "false")
                else:
                    arguments.append(str(value))
            else:
                return None
        return tuple(arguments)

    def _launch(self, reference, parents, arguments) -> Launch | None:
        """The launch ``reference`` is (a ``<<<...>>>`` call), or is the kernel of (a
        ``cudaLaunchKernel``-style call); None when it only names the kernel."""
        line = reference.location.line
        if reference.kind == self.kinds.CALL_EXPR and self._is_launch(reference):
            start = reference.extent.start
            written = self.launches.get((self._real(start.file.name) if start.file else "",
                                         start.line, start.column))
            if written is not None:
                return replace(written.launch, template_arguments=arguments)
            children = list(reference.get_children())
            configuration = [self._text(argument) for argument in children[1].get_children()]
            configuration += [""] * (4 - len(configuration))
            return Launch(self._file(reference), line, arguments, configuration[0],
                          configuration[1],
                          configuration[2], configuration[3],
                          tuple(self._text(argument) for argument in children[2:]))
        call = next((parent for parent in reversed(parents)
                     if parent.kind == self.kinds.CALL_EXPR), None)
        if call is None or not call.spelling.startswith(("cudaLaunchKernel",
                                                         "cudaLaunchCooperativeKernel")):
            return None
        texts = [self._text(argument) for argument in call.get_arguments()]
        if len(texts) < 3:
            return None
        texts += [""] * (6 - len(texts))
        return Launch(self._file(call), call.location.line, arguments, texts[1], texts[2],
                      texts[4], texts[5], ())

    def _file(self, cursor) -> str:
        """The file of a launch: the path read, or its includer's."""
        file = cursor.location.file
        return str(self.path) if file is None or self._in_main(file.name) else file.name

    def _dependent_launches(self, cursor) -> list[tuple[int, str]]:
        """(line, note) of the launches inside a template that names its parameters."""
        return [(written.launch.line, f"launch at line {written.launch.line} depends on the "
                 "parameters of the template around it, which the file does not instantiate")
                for written in self.launches.values()
                if written.kernel == cursor.spelling and written.dependent]

    def _dynamic_shared(self, cursor, seen: set) -> bool:
        """Whether the function declares, or reaches through the functions it calls, an
        ``extern __shared__`` array."""
        seen.add(cursor.get_usr())
        for node in cursor.walk_preorder():
            if node.kind == self.kinds.VAR_DECL and \
                    node.storage_class == self.cindex.StorageClass.EXTERN and \
                    any(child.kind == self.kinds.CUDASHARED_ATTR for child in node.get_children()):
                return True
            if node.kind == self.kinds.CALL_EXPR and node.referenced is not None:
                definition = node.referenced.get_definition()
                if definition is not None and definition.get_usr() not in seen and \
                        len(seen) < 32 and self._dynamic_shared(definition, seen):
                    return True
        return False

    # -- parameters
    def _parameter(self, cursor, type_, writes: tuple[bool, bool]) -> Parameter:
        canonical = type_.get_canonical()
        if "type-parameter-" in canonical.spelling:
            canonical = type_  # a template's own parameter: its names as declared
        kind_name = canonical.kind.name
        written_to, read_from = writes
        written = self._written_type(cursor) or type_.spelling
        if kind_name in ("POINTER", "INCOMPLETEARRAY", "CONSTANTARRAY"):
            # an array parameter (double phi[][400][400]) is a pointer to its element
            pointee = canonical.get_pointee() if kind_name == "POINTER" else \
                canonical.element_type
            return Parameter(cursor.spelling, written, _parameter_type(canonical.spelling),
                             "pointer",
                             element=_unqualified(pointee.spelling),
                             element_size=max(pointee.get_size(), 0),
                             const=pointee.is_const_qualified(),
                             restrict=canonical.is_restrict_qualified(),
                             written_to=written_to, read_from=read_from,
                             fields=_fields(pointee))
        kind = "scalar" if kind_name in _ARITHMETIC else "struct" if kind_name == "RECORD" \
            else "other"
        return Parameter(cursor.spelling, written, _parameter_type(canonical.spelling), kind,
                         element_size=max(canonical.get_size(), 0), written_to=False,
                         fields=_fields(canonical))

    def _written_type(self, cursor) -> str:
        """The parameter's declaration as written, without its name and default value."""
        extent = cursor.extent
        if extent.start.file is None or not self._in_main(extent.start.file.name):
            return ""
        start, end = extent.start.offset, extent.end.offset
        name = cursor.location.offset if cursor.spelling else end
        if not start <= name <= end:
            return ""
        after = self.data[name + len(cursor.spelling.encode()):end].split(b"=")[0] \
            if cursor.spelling else b""
        return _normal_space((self.data[start:name] + after).decode("utf-8", "replace"))

    def _text(self, cursor) -> str:
        extent = cursor.extent
        data = self.texts.get(self._real(extent.start.file.name)) if extent.start.file else None
        if data is None:
            return ""  # a default argument, or text of a header
        return _normal_space(data[extent.start.offset:extent.end.offset]
                             .decode("utf-8", "replace"))

    def _parameter_writes(self, function, parameters, unknown=None) -> list[tuple[bool, bool]]:
        """(written_to, read_from) of each pointer parameter of ``function``'s body
        (``unknown``, or both for each, when it has none)."""
        body = next((child for child in function.get_children()
                     if child.kind == self.kinds.COMPOUND_STMT), None)
        if body is None:
            return unknown or [(True, True)] * len(parameters)
        return _PointerUses(self, body, parameters).results()

    def callee_writes(self, callee, index: int, depth: int) -> tuple[bool, bool] | None:
        """What a function defined in the unit does through its pointer parameter ``index``
        (None: no definition to follow)."""
        definition = callee.get_definition()
        if definition is None or depth >= _CALLEE_DEPTH:
            return None
        key = (definition.get_usr(), index)
        if key in self._written:
            return self._written[key]
        parameters = [child for child in definition.get_children()
                      if child.kind == self.kinds.PARM_DECL]
        body = next((child for child in definition.get_children()
                     if child.kind == self.kinds.COMPOUND_STMT), None)
        if index >= len(parameters) or body is None:
            return None
        self._written[key] = (True, True)  # recursion: conservative until known
        result = _PointerUses(self, body, [parameters[index]], depth + 1).results()[0]
        self._written[key] = result
        return result


class _PointerUses:
    """Which pointer parameters a function body writes through and reads through.

    Each use of a parameter is followed up the expression tree, the value being either the
    pointer (``p``, ``p + i``, ``(float4 *)p``) or an element it designates (``p[i]``, ``*p``,
    ``p->f``, ``p[i].x``): an element assigned, incremented, or passed by non-const
    reference is written; a pointer passed to a call whose parameter points to non-const data,
    or whose callee clang cannot resolve (a dependent call in a template), is written unless
    the callee is followed into; a pointer copied into a local variable is followed through
    that variable. Whatever the walk does not understand counts as a write (and a read)."""

    def __init__(self, reader: _ClangReader, body, parameters, depth: int = 0):
        self.reader = reader
        self.kinds = reader.kinds
        self.body = body
        self.depth = depth
        self.origin = {parameter.hash: index for index, parameter in enumerate(parameters)}
        self.aliases: dict[int, tuple[int, str]] = {hash_: (index, "pointer")
                                                    for hash_, index in self.origin.items()}
        self.written = [False] * len(parameters)
        self.read = [False] * len(parameters)

    def results(self) -> list[tuple[bool, bool]]:
        for _ in range(4):  # aliases of aliases
            known = len(self.aliases)
            self.written = [False] * len(self.written)
            self.read = [False] * len(self.read)
            self._walk(self.body, [self.body])
            if len(self.aliases) == known:
                break
        return list(zip(self.written, self.read))

    def _walk(self, cursor, stack):
        for child in cursor.get_children():
            stack.append(child)
            if child.kind == self.kinds.DECL_REF_EXPR and child.referenced is not None:
                alias = self.aliases.get(child.referenced.hash)
                if alias is not None:
                    self._follow(stack, *alias)
            self._walk(child, stack)
            stack.pop()

    def _mark(self, index: int, written: bool, read: bool):
        self.written[index] |= written
        self.read[index] |= read

    def _follow(self, stack, index: int, state: str):
        kinds = self.kinds
        position = len(stack) - 1
        while position > 0:
            child, parent = stack[position], stack[position - 1]
            kind = parent.kind.name
            first = _first_child(parent)
            leading = first is not None and _place(first) == _place(child)
            if kind in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
                pass
            elif kind in _CASTS:
                if state == "element" and parent.type.get_canonical().kind.name != \
                        "LVALUEREFERENCE":
                    return self._mark(index, False, True)
            elif kind == "ARRAY_SUBSCRIPT_EXPR":
                if first is None or _place(first) != _place(child):  # the index
                    return self._mark(index, False, True) if state == "element" else None
                state = "element"  # p[i], or an array member of an element: p->a[i]
            elif kind == "UNARY_OPERATOR":
                operator = self.reader.unary_operator(parent, child)
                if operator == "*" and state == "pointer":
                    state = "element"
                elif operator == "&" and state == "element":
                    state = "pointer"
                elif operator in ("++", "--") and state == "element":
                    return self._mark(index, True, True)
                elif state == "element":
                    return self._mark(index, False, True)
                else:
                    return None
            elif kind == "MEMBER_REF_EXPR":
                referenced = parent.referenced
                if referenced is not None and referenced.kind in (kinds.CXX_METHOD,
                                                                   kinds.CONVERSION_FUNCTION):
                    return self._mark(index, not referenced.is_const_method(), True)
                state = "element"
            elif kind == "BINARY_OPERATOR" or kind == "COMPOUND_ASSIGNMENT_OPERATOR":
                operator = self.reader.binary_operator(parent, first)
                left = leading
                if operator in _ASSIGNMENTS:
                    if left:
                        if state == "element":
                            return self._mark(index, True, operator != "=")
                        return None  # the pointer variable itself is reassigned
                    if state == "pointer" and operator == "=":
                        return self._alias(first, index, state)
                    return self._mark(index, False, True) if state == "element" else None
                if operator == ",":
                    if left:
                        return self._mark(index, False, True) if state == "element" else None
                elif operator in ("+", "-") and state == "pointer":
                    pass
                else:
                    return self._mark(index, False, True) if state == "element" else None
            elif kind == "CONDITIONAL_OPERATOR":
                if leading:
                    return self._mark(index, False, True) if state == "element" else None
            elif kind == "CALL_EXPR":
                return self._call(parent, child, index, state)
            elif kind == "VAR_DECL":
                return self._alias(parent, index, state)
            elif kind in _READING_STATEMENTS:
                return self._mark(index, False, True) if state == "element" else None
            elif kind == "RETURN_STMT" and state == "element":
                return self._mark(index, False, True)
            else:
                return self._mark(index, True, True)  # an escape the walk does not follow
            position -= 1
        return None

    def _alias(self, target, index: int, state: str):
        """``q = p`` or ``T *q = p``: follow the variable, unless it cannot write."""
        kinds = self.kinds
        if target.kind == kinds.DECL_REF_EXPR and target.referenced is not None:
            target = target.referenced
        if target.kind not in (kinds.VAR_DECL, kinds.PARM_DECL):
            return self._mark(index, True, True)
        canonical = target.type.get_canonical()
        if state == "pointer" and canonical.kind.name == "POINTER":
            if canonical.get_pointee().is_const_qualified():
                return self._mark(index, False, True)
            self.aliases.setdefault(target.hash, (index, "pointer"))
            return None
        if state == "element" and canonical.kind.name == "LVALUEREFERENCE":
            if canonical.get_pointee().is_const_qualified():
                return self._mark(index, False, True)
            self.aliases.setdefault(target.hash, (index, "element"))
            return None
        if state == "element" or canonical.kind.name in _ARITHMETIC:
            return self._mark(index, False, True)  # a copy of the value
        return self._mark(index, True, True)

    def _call(self, call, child, index: int, state: str):
        arguments = list(call.get_arguments())
        place = _place(child)
        position = next((i for i, argument in enumerate(arguments)
                         if _place(argument) == place), None)
        name = call.spelling
        if position is None:
            return self._mark(index, state == "element", True)  # the callee, or its object
        if name in _READ_ONLY_CALLS:
            return self._mark(index, False, True)
        if name.startswith("operator"):
            operator = name[len("operator"):].strip()
            if position == 0 and operator in _ASSIGNMENTS:
                return self._mark(index, True, operator != "=")
            if position == 0 and operator in ("++", "--"):
                return self._mark(index, True, True)
        callee = call.referenced
        if callee is None:  # unresolved (a dependent call in a template)
            if name.startswith("operator"):
                return self._mark(index, False, True)  # no assignment: arithmetic, comparison
            type_ = child.type.get_canonical()
            if state == "pointer":
                const = type_.kind.name == "POINTER" and type_.get_pointee().is_const_qualified()
            else:
                const = type_.is_const_qualified()
            return self._mark(index, not const, True)
        if callee.kind == self.kinds.CXX_METHOD and name.startswith("operator"):
            if position == 0:  # the object of a member operator
                return self._mark(index, state == "element" and not callee.is_const_method(),
                                  True)
            position -= 1
        # the callee's type, not its PARM_DECLs: a builtin (__nvvm_atom_add_gen_f) has none
        function = callee.type.get_canonical()
        if function.kind.name != "FUNCTIONPROTO":
            return self._mark(index, True, True)
        parameters = list(function.argument_types())
        if position >= len(parameters):
            return self._mark(index, False, True)  # variadic: printf("%p", p)
        type_ = parameters[position].get_canonical()
        reference = type_.kind.name in ("LVALUEREFERENCE", "RVALUEREFERENCE")
        pointee_const = type_.kind.name in ("POINTER", "LVALUEREFERENCE", "RVALUEREFERENCE") \
            and type_.get_pointee().is_const_qualified()
        if state == "element":
            return self._mark(index, reference and not pointee_const, True)
        if type_.kind.name != "POINTER" and not reference:
            return self._mark(index, False, True)  # the pointer's value (an address)
        if pointee_const and not reference:
            return self._mark(index, False, True)
        followed = self.reader.callee_writes(callee, position, self.depth)
        if followed is not None and not reference:
            return self._mark(index, *followed)
        return self._mark(index, True, True)


def _operator_spellings(cindex, which: str, last: int) -> dict[int, str] | None:
    """libclang's kinds of binary or unary operators and their spellings (None: a libclang
    older than LLVM 17, which has no such kinds)."""
    lib = cindex.conf.lib
    try:
        spelling = getattr(lib, f"clang_get{which}OperatorKindSpelling")
        getattr(lib, f"clang_getCursor{which}OperatorKind")
    except AttributeError:
        return None
    spelling.restype = cindex._CXString
    spelling.argtypes = [ctypes.c_int]
    return {kind: cindex._CXString.from_result(spelling(kind)) for kind in range(1, last + 1)}


def _fields(type_) -> tuple[Field, ...]:
    """The data members of a struct type (() for any other type, or one still dependent)."""
    if type_.get_canonical().kind.name != "RECORD" or type_.get_size() < 0:
        return ()
    fields = []
    for member in type_.get_canonical().get_fields():
        offset = member.get_field_offsetof()
        bits = member.is_bitfield()
        fields.append(Field(member.spelling, _plain_type(member.type.get_canonical().spelling),
                            max(offset, 0) // 8, 0 if bits else max(member.type.get_size(), 0)))
    return tuple(fields)


def _place(cursor) -> tuple[int, int, int]:
    """Where an expression is: cursors of one expression reached by two paths (a call's
    children and its arguments) do not compare equal."""
    extent = cursor.extent
    return cursor.kind.value, extent.start.offset, extent.end.offset


def _first_child(cursor):
    return next(iter(cursor.get_children()), None)


def _unary_operator(data: bytes, operator, operand) -> str:
    """The operator of a unary expression: before its operand, or after it (``p[i]++``)."""
    before = data[operator.extent.start.offset:operand.extent.start.offset].strip()
    if before:
        return before.decode("latin-1")
    return data[operand.extent.end.offset:operator.extent.end.offset].strip().decode("latin-1")


def _binary_operator(data: bytes, operator, left) -> str:
    if left is None:
        return ""
    rest = data[left.extent.end.offset:operator.extent.end.offset]
    match = re.match(rb"\s*(?:/\*.*?\*/\s*|//[^\n]*\n\s*)*([-+*/%&|^<>=!,]+)", rest, re.DOTALL)
    if match is None:
        return ""
    operator_text = match.group(1).decode("latin-1")
    for candidate in sorted(_ASSIGNMENTS | {"==", "!=", "<=", ">=", "&&", "||", "<<", ">>"},
                            key=len, reverse=True):
        if operator_text.startswith(candidate):
            return candidate
    return operator_text[:1]


def _normal_space(text: str) -> str:
    return " ".join(text.split())


def _plain_type(spelling: str) -> str:
    """A canonical type's spelling without ``__restrict`` (the parameter's ``restrict`` says
    it)."""
    return _normal_space(re.sub(r"\b__restrict\b", "", spelling))


def _parameter_type(spelling: str) -> str:
    """A parameter's type without ``__restrict`` and its own top-level ``const`` (``const int
    n``, ``float *const p``: what the caller passes is an ``int``, a ``float *``)."""
    plain = _plain_type(spelling)
    if re.search(r"[*&]\s*(?:const|volatile|\s)*$", plain):
        return re.sub(r"([*&])\s*(?:const|volatile|\s)*$", r"\1", plain)
    return _normal_space(re.sub(r"^(?:(?:const|volatile)\s+)+|(?:\s+(?:const|volatile))+$", "",
                                plain))


def _unqualified(spelling: str) -> str:
    return _normal_space(re.sub(r"\b(?:const|volatile|__restrict)\b", "", spelling))


# ---- tree-sitter ------------------------------------------------------------------------

@dataclass(frozen=True)
class _WrittenLaunch:
    """A launch as tree-sitter reads it, with what matching it to clang's cursors needs."""

    launch: Launch
    kernel: str  # the launched name, unqualified
    column: int
    dependent: bool  # inside a template whose parameters its template arguments name


@dataclass
class _Sketch:
    kernels: list[Kernel]
    launches: list[_WrittenLaunch]


def _sketch(path: Path, data: bytes, includer: tuple[Path, bytes] | None = None) -> _Sketch:
    """The kernels of ``data`` as tree-sitter reads them (types as written), with the launches
    and explicit instantiations of ``data`` and of the file that includes it."""
    definitions, launches, explicit = _sketch_nodes(data)
    written = [_read_launch(path, data, node, names) for node, names in launches]
    instantiated = [_callee_parts(data, node) for node in explicit]
    if includer is not None:
        _, outer_launches, outer_explicit = _sketch_nodes(includer[1])
        written += [_read_launch(includer[0], includer[1], node, names)
                    for node, names in outer_launches]
        instantiated += [_callee_parts(includer[1], node) for node in outer_explicit]
    kernels = []
    for node, namespaces in definitions:
        kernel = _sketch_kernel(path, data, node, namespaces, written, instantiated)
        if kernel is not None:
            kernels.append(kernel)
    return _Sketch(sorted(kernels, key=lambda kernel: kernel.line), written)


def _sketch_nodes(data: bytes):
    """(kernel definitions with their namespaces, launch calls with the template parameter
    names around them, the declarators of explicit instantiations of kernels)."""
    tree = treesitter.parse(data)
    definitions, launches, explicit = [], [], []
    pending = [(tree.root_node, (), ())]
    while pending:
        node, namespaces, template_names = pending.pop()
        kind = node.type
        if kind == "function_definition":
            if _is_global(data, node):
                definitions.append((node, namespaces))
            names = template_names
            if node.parent is not None and node.parent.type == "template_declaration":
                names = template_names + _template_names(data, node.parent)
            pending.extend((child, namespaces, names) for child in node.children)
            continue
        if kind == "call_expression" and (
                any(c.type == "kernel_call_syntax" for c in node.children) or
                _is_ggl_launch(data, node)):
            launches.append((node, template_names))
        if kind == "template_instantiation" and _is_global(data, node):
            function = node.child_by_field_name("declarator")
            target = function.child_by_field_name("declarator") if function is not None \
                else None
            if target is not None:
                explicit.append(target)
        if kind == "namespace_definition":
            name = node.child_by_field_name("name")
            namespaces = namespaces + ((_node_text(data, name),) if name is not None else ())
        pending.extend((child, namespaces, template_names) for child in node.children)
    return definitions, launches, explicit


def _is_global(data: bytes, node) -> bool:
    declarator = node.child_by_field_name("declarator")
    head = data[node.start_byte:declarator.start_byte if declarator is not None else
                node.end_byte]
    return re.search(rb"\b__global__\b", head) is not None


def _template_names(data: bytes, template) -> tuple[str, ...]:
    parameters = template.child_by_field_name("parameters")
    if parameters is None:
        return ()
    names = []
    for parameter in parameters.named_children:
        identifiers = [n for n in _descendants(parameter)
                       if n.type in ("type_identifier", "identifier")]
        if identifiers:
            names.append(_node_text(data, identifiers[-1]))
    return tuple(names)


def _descendants(node):
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(reversed(current.children))


def _node_text(data: bytes, node) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _callee_parts(data: bytes, function) -> tuple[str, tuple[str, ...]]:
    """(kernel name, template arguments as written) of a launched expression."""
    arguments: tuple[str, ...] = ()
    for node in _descendants(function):
        if node.type == "template_argument_list":
            arguments = tuple(_normal_space(_node_text(data, argument))
                              for argument in node.named_children if argument.type != "comment")
            break
    text = _node_text(data, function)
    text = text.split("<", 1)[0]
    return _normal_space(text.split("::")[-1]).strip("() "), arguments


def _is_ggl_launch(data: bytes, call) -> bool:
    function = call.child_by_field_name("function")
    return function is not None and _node_text(data, function) == "hipLaunchKernelGGL"


def _read_launch(path: Path, data: bytes, call, template_names) -> _WrittenLaunch:
    """``k<<<grid, block, shared, stream>>>(args)``, or ``hipLaunchKernelGGL(k, grid, block,
    shared, stream, args...)`` (``k`` maybe in ``HIP_KERNEL_NAME(...)``)."""
    arguments = call.child_by_field_name("arguments")
    values = [a for a in arguments.named_children if a.type != "comment"] \
        if arguments is not None else []
    if _is_ggl_launch(data, call):
        function = values[0] if values else None
        if function is not None and function.type == "call_expression" and \
                _node_text(data, function).startswith("HIP_KERNEL_NAME"):
            inner = function.child_by_field_name("arguments")
            function = inner.named_children[0] if inner and inner.named_children else None
        settings = [_normal_space(_node_text(data, c)) for c in values[1:5]]
        values = values[5:]
    else:
        function = call.child_by_field_name("function")
        configuration = next(c for c in call.children if c.type == "kernel_call_syntax")
        settings = [_normal_space(_node_text(data, c)) for c in configuration.named_children
                    if c.type != "comment"]
    name, template_arguments = _callee_parts(data, function) if function is not None else ("",
                                                                                           ())
    settings += [""] * (4 - len(settings))
    words = set(re.findall(r"\w+", " ".join(template_arguments)))
    launch = Launch(str(path), call.start_point[0] + 1, template_arguments, settings[0],
                    settings[1], settings[2], settings[3],
                    tuple(_normal_space(_node_text(data, a)) for a in values))
    return _WrittenLaunch(launch, name, call.start_point[1] + 1,
                          bool(words & set(template_names)))


def _sketch_kernel(path: Path, data: bytes, node, namespaces, launches, explicit):
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    parameter_list = declarator.child_by_field_name("parameters")
    if name_node is None or parameter_list is None:
        return None
    name = _node_text(data, name_node).split("::")[-1].split("<")[0].strip()
    template = node.parent if node.parent is not None and \
        node.parent.type == "template_declaration" else None
    template_parameters = ()
    if template is not None:
        parameters_node = template.child_by_field_name("parameters")
        template_parameters = tuple(_normal_space(_node_text(data, p))
                                    for p in parameters_node.named_children
                                    if p.type != "comment") if parameters_node else ()
    parameters = tuple(_sketch_parameter(data, p) for p in parameter_list.named_children
                       if p.type in ("parameter_declaration", "optional_parameter_declaration"))
    qualified = "::".join((*namespaces, name))
    by_arguments: dict[tuple[str, ...], list] = {}
    if not template_parameters:
        by_arguments[()] = []
    for written in launches:
        if written.kernel == name and not written.dependent:
            by_arguments.setdefault(written.launch.template_arguments, []).append(written.launch)
    for explicit_name, arguments in explicit:
        if explicit_name == name and arguments:
            by_arguments.setdefault(arguments, [])
    body = node.child_by_field_name("body")
    dynamic = body is not None and re.search(
        rb"\bextern\s+(?:\w+\s+)*__shared__\b|\b__shared__\s+extern\b",
        data[body.start_byte:body.end_byte]) is not None
    return Kernel(name, qualified, str(path), name_node.start_point[0] + 1, template_parameters,
                  parameters,
                  tuple(Instantiation(arguments, parameters, tuple(found))
                        for arguments, found in by_arguments.items()),
                  dynamic_shared=dynamic, reader="tree-sitter")


def _sketch_parameter(data: bytes, node) -> Parameter:
    nodes = list(_descendants(node))
    declarator = node.child_by_field_name("declarator")
    names = [n for n in _descendants(declarator) if n.type == "identifier"] \
        if declarator is not None else []
    name = names[-1] if names else None
    start, end = node.start_byte, node.end_byte
    if node.type == "optional_parameter_declaration":
        default = node.child_by_field_name("default_value")
        if default is not None:
            end = default.start_byte
    text = data[start:end].decode("utf-8", "replace").rstrip().rstrip("=")
    written = _normal_space(text if name is None else
                            _node_text(data, node)[:name.start_byte - start] +
                            data[name.end_byte:end].decode("utf-8", "replace").rstrip()
                            .rstrip("="))
    type_node = node.child_by_field_name("type")
    base = _normal_space(_node_text(data, type_node)) if type_node is not None else ""
    pointer = any(n.type in ("pointer_declarator", "abstract_pointer_declarator",
                             "array_declarator", "abstract_array_declarator") for n in nodes)
    reference = any(n.type in ("reference_declarator", "abstract_reference_declarator")
                    for n in nodes)
    qualifiers = {_node_text(data, n) for n in node.children if n.type == "type_qualifier"}
    parameter_name = _node_text(data, name) if name is not None else ""
    if pointer:
        const = "const" in qualifiers
        return Parameter(parameter_name, written, written, "pointer", element=base,
                         element_size=_FUNDAMENTAL_SIZES.get(base, 0), const=const,
                         restrict=re.search(r"\b(?:__restrict__|__restrict|restrict)\b",
                                            written) is not None,
                         written_to=not const, read_from=True)
    kind = "other" if reference else "scalar" if base in _FUNDAMENTAL_SIZES else "other"
    return Parameter(parameter_name, written, written, kind,
                     element_size=_FUNDAMENTAL_SIZES.get(base, 0) if kind == "scalar" else 0)
