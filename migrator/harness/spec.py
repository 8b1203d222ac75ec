"""Harness specs: one TOML file per kernel instantiation, generated with defaults a user may edit.

``default_spec`` builds the document from the front end's view of a kernel and its launch sites;
``write_spec`` writes it unless the file on disk was edited since rocmigrate wrote it (its first
key holds a digest of the rest: a spec whose digest no longer matches is the user's and is kept,
unless ``force``); ``load_spec`` reads a spec back, checking every field.

Defaults (each choice is recorded in the parameter's ``origin``):
- element count of a pointer: the bytes of the ``cudaMalloc`` of the launch site's argument
  (raised to what the kernel indexes at the chosen launch, if more); else what the kernel's
  indexing reaches at that launch, read by the front end (``migrator.clang.indexing``: largest
  index + 1); else the product of the size parameters' values (or the launch's thread count,
  if larger);
- sizes no launch site gives are lowered, by halves and then each back up as far as it goes,
  until every buffer holds what the kernel indexes: its ``cudaMalloc``'s count (a loop
  ``a < numatoms`` over a buffer allocated for 4000 gives numatoms 4000), MAX_BUFFER elements
  for the others (a matrix ``m[i * n + j]``: n at most 4096);
- a size parameter (``n``, ``size``, ``count``, ``num*``, ``width``, ``rows``...): its value at the
  launch site, else a share of ``DEFAULT_ELEMENTS`` (1 << 20 for one size, 1024 x 1024 for two);
  another integer: its value at the launch site, else 1; a float: its value there, else 0.5;
- grid and block: the launch site's when they evaluate (its block alone, with a grid covering
  the element count, when only that does), else blocks of the kernel's block-size
  template argument (``int BLOCK_SIZE``), or 256 threads (16 x 16 when the kernel takes a width
  and a height), covering the element count;
- inputs: ``const`` pointees and pointers the body only reads; outputs: pointers it writes.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import __version__
from ..fsutil import MiB, read_regular
from .types import (COMPONENTS, DEFAULT_RANGES, DEFAULT_TOLERANCES, FLOATING, element_layout,
                    plain)

DEFAULT_ELEMENTS = 1 << 20
DEFAULT_BLOCK = 256
MAX_ELEMENTS = 1 << 28  # a product of size parameters above this is not taken as a count
MAX_BUFFER = 1 << 24  # elements: default sizes are lowered until each buffer's indexing fits
DIGEST_KEY = "rocmigrate_digest"
SPEC_LIMIT = 4 * MiB  # the most read of a spec
ROLES = ("input", "output", "inout")
FILLS = ("random", "zero")
_SIZE_NAME = re.compile(
    r"^(?:[nNmMkK]|n_\w+|n[A-Z]\w*|n(?:elem|item|row|col|point|pt|x|y|z|data|sample|node|edge|"
    r"cell|particle|bin|vert)\w*|num\w*|N[A-Z_]\w*|"
    r"\w*(?:size|Size|SIZE|len|Len|LEN|length|Length|count|Count|COUNT|elems|Elems|elements|"
    r"Elements|total)|width|height|depth|rows|cols|nrows|ncols|w|h|d|dim\w*|[xyz]_?dim|"
    r"extent\w*)$")
_BLOCK_NAME = re.compile(r"THREAD|BLOCK|\bTPB\b|\bBS\b|_BS\b|BLK|WG_?SIZE|WORKGROUP",
                         re.IGNORECASE)
_X_DIM = re.compile(r"^(?:width|w|cols|ncols|n_?cols|nx|dim_?x|x_?dim|columns?)$", re.IGNORECASE)
_Y_DIM = re.compile(r"^(?:height|h|rows|nrows|n_?rows|ny|dim_?y|y_?dim)$", re.IGNORECASE)
_INDEX_NAME = re.compile(r"(?:^|_)(?:idx|index|indices|perm\w*|map|ind|offsets?|row_?ptr|col_?idx|"
                         r"col_?ind|row_?ind)(?:$|_)|(?:Idx|Index|Indices|Ptr|Ind)$",
                         re.IGNORECASE)


class SpecError(Exception):
    """A spec that cannot be used as it is (bad TOML, a missing or wrong field)."""


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    kind: str  # pointer | scalar | struct
    type: str  # the parameter's type (resolved)
    role: str = "input"  # pointers
    component: str = ""  # pointers and scalars: a types.COMPONENTS name
    components: int = 1
    count: int = 0  # pointers: elements
    fill: str = "random"
    value_range: tuple[float, float] = (0, 0)
    index_of: str = ""  # integer pointers: values kept in [0, that buffer's count)
    value: float | int = 0  # scalars
    init: str = ""  # structs: a C++ expression of the parameter's type

    @property
    def element_size(self) -> int:
        return COMPONENTS[self.component].size * self.components if self.component else 0

    @property
    def written(self) -> bool:
        return self.kind == "pointer" and self.role in ("output", "inout")


@dataclass(frozen=True)
class HarnessSpec:
    name: str  # the harness's name: <kernel>[-<n>]
    kernel: str  # qualified name, as the harness calls it
    file: str  # the CUDA file, relative to the source root
    template_arguments: tuple[str, ...]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    seed: int
    warmup: int
    repetitions: int
    parameters: tuple[ParameterSpec, ...]
    tolerances: dict = field(default_factory=dict)
    needs_edit: str = ""


def is_size_name(name: str) -> bool:
    return bool(_SIZE_NAME.match(name)) and not re.search(r"stride|pitch|step|ld", name, re.I)


def default_spec(kernel, instantiation, rel: str, values, name: str,
                 specialization: bool = False) -> dict:
    """The spec document of one instantiation of ``kernel`` (front-end dataclasses), with the
    constants of its file in ``values`` (``SiteValues``). ``specialization``: the kernel is an
    explicit specialization of a template (``template <> __global__ void k<__half>(...)``),
    whose template arguments the front end does not give."""
    edits: list[str] = []
    if specialization:
        edits.append(f"{kernel.name} is an explicit specialization of a template kernel: set "
                     "kernel.template_arguments to its arguments")
    parameters = instantiation.parameters if instantiation else kernel.parameters
    template_arguments = list(instantiation.template_arguments) if instantiation else []
    if kernel.template_parameters and not instantiation:
        edits.append(f"{kernel.name} is a template and the file instantiates it nowhere: set "
                     "kernel.template_arguments and the parameters' types")
    launches = instantiation.launches if instantiation else ()
    launch, site_grid, site_block = _launch(launches, values)
    site_args = _site_arguments(launch, parameters, values)
    sizes = {p.name: site_args.get(p.name) for p in parameters
             if p.kind == "scalar" and _is_integer(p) and is_size_name(p.name)}
    defaulted = [n for n in sizes if sizes[n] is None]
    sizes = {**sizes, **_default_dims(defaulted)}
    template_block = _template_block(kernel, template_arguments)
    indexing = {b.name: b for b in instantiation.indexing} if instantiation else {}
    allocated = _allocations(parameters, launch, values)

    def layout(sizes: dict[str, int], shrink: int = 0, kept_grid=None) -> _Layout:
        return _layout(sizes, site_grid, site_block, launch, rel, template_block, parameters,
                       site_args, indexing, allocated, shrink, kept_grid)

    chosen, fitted = _fit(sizes, defaulted, layout)
    overflowing = [why for key, why in chosen.overflows.items() if key.startswith("__shared__")]
    if overflowing and site_block is None and template_block is None:
        # the default block overflows a __shared__ array of the kernel: halve it until none does;
        # a grid covering the elements again only where every buffer's count follows the launch
        # (more blocks reach further: a buffer whose indexing is not read would not grow)
        read_whole = all(origin.startswith("the kernel's indexing: its largest")
                         for _, origin in chosen.counts.values())
        for shrink in range(1, DEFAULT_BLOCK.bit_length()):
            candidate = layout(chosen.sizes, shrink, None if read_whole else chosen.grid)
            if not any(key.startswith("__shared__") for key in candidate.overflows):
                chosen = replace(candidate, origin=candidate.origin + " (the default block, "
                                 f"lowered until the kernel's shared arrays hold what it "
                                 f"indexes: {'; '.join(overflowing)})")
                break
    if any(key.startswith("__shared__") for key in chosen.overflows) and site_block is None:
        # (a launch site's block is the program's: an overflow there is the reading's doubt)
        edits.append("at this launch the kernel indexes past its shared arrays (" +
                     ", ".join(why for key, why in chosen.overflows.items()
                               if key.startswith("__shared__")) + "): set launch.block "
                     "(and grid) to a launch the kernel is written for")
    sizes, grid, block = chosen.sizes, chosen.grid, chosen.block
    launch_origin, counts = chosen.origin, chosen.counts
    shared = 0
    needed = _dynamic_shared(indexing, chosen)
    if launch is not None and launch.shared_bytes:
        known = values.integer(launch.shared_bytes)
        if known is None:
            known = values.integer(_with_launch(launch, chosen))
        if known is not None:
            shared = known
        elif needed is not None:
            shared = needed
            launch_origin += (f"; dynamic shared memory ({launch.shared_bytes}, unknown): "
                              f"{needed} bytes, what the kernel's extern __shared__ arrays "
                              "reach at this launch")
        else:
            edits.append(f"the dynamic shared memory of {_shown_file(launch.file, rel)}:"
                         f"{launch.line} "
                         f"({launch.shared_bytes}) is not a constant: set launch.shared_bytes")
    elif kernel.dynamic_shared:
        if needed is not None:
            shared = needed
            launch_origin += (f"; dynamic shared memory: {needed} bytes, what the kernel's "
                              "extern __shared__ arrays reach at this launch")
        else:
            edits.append("the kernel uses extern __shared__ memory and no launch site gives "
                         "its size: set launch.shared_bytes")
    documents = []
    for index, parameter in enumerate(parameters):
        document, why = _parameter(parameter, index, site_args, sizes, counts, fitted, values)
        documents.append(document)
        if why:
            edits.append(why)
    spec = {"kernel": {"name": kernel.qualified_name or kernel.name, "file": rel,
                       "line": kernel.line, "template_arguments": template_arguments,
                       "reader": kernel.reader, "note": kernel.note},
            "launch": {"grid": list(grid), "block": list(block), "shared_bytes": shared,
                       "origin": launch_origin},
            "run": {"seed": 1, "warmup": 3, "repetitions": 20},
            "parameters": documents,
            "tolerance": {kind: dict(values_) for kind, values_ in DEFAULT_TOLERANCES.items()}}
    if edits:
        spec = {"needs_edit": "; ".join(edits), **spec}
    spec["kernel"]["harness"] = name
    return spec


@dataclass(frozen=True)
class _Layout:
    """One choice of the size parameters' values, with the launch and the element counts of
    the pointers it leads to."""

    sizes: dict
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    origin: str
    elements: int
    counts: dict  # parameter index -> (count, origin)
    overflows: dict  # buffer name -> why it overflows at this choice
    scalars: dict = field(default_factory=dict)  # the scalar values the indexing was read at


def _layout(sizes, site_grid, site_block, launch, rel, template_block, parameters, site_args,
            indexing, allocated, shrink: int = 0,
            kept_grid: tuple[int, int, int] | None = None) -> _Layout:
    """``shrink``: halve the default block that many times, keeping the grid ``kept_grid`` (so
    that no thread index grows: a kernel whose blocks each cover more than their threads, read
    or not, stays within what the larger block reached)."""
    grid, block = site_grid, site_block
    threads = math.prod(grid) * math.prod(block) if grid and block else 0
    product = math.prod(sizes.values()) if sizes else 0
    if product > MAX_ELEMENTS:  # several sizes of one buffer's length each: not their product
        product = max(sizes.values())
    elements = max(product, threads) or DEFAULT_ELEMENTS
    if grid is None and block is not None:  # the site's block, a grid covering the elements
        grid = _covering(block, sizes, elements)
        origin = (f"launch site {_shown_file(launch.file, rel)}:{launch.line}: block "
                  f"{launch.block}; its grid ({launch.grid}) unknown: covering {elements} "
                  "elements")
    elif grid is None or block is None:
        grid, block, origin = _default_launch(sizes, elements, template_block, shrink)
        if kept_grid is not None:
            grid = kept_grid
            origin = (f"no launch site to read: blocks of {' x '.join(map(str, block[:2]))} "
                      f"threads, the grid of the default block ({' x '.join(map(str, grid))})")
    else:
        origin = (f"launch site {_shown_file(launch.file, rel)}:{launch.line}: "
                  f"<<<{launch.grid}, {launch.block}>>>")
    scalars = {**{p.name: 1 for p in parameters if p.kind == "scalar"}, **site_args, **sizes}
    values = {"grid": grid, "block": block, "scalars": scalars}
    counts, overflows = {}, {}
    for index, parameter in enumerate(parameters):
        if parameter.kind != "pointer":
            continue
        reading = indexing.get(parameter.name)
        extent = reading.extent(values) if reading is not None else None
        known = allocated.get(index)
        if known is not None:
            count, origin_ = known
            if extent is not None and extent > count:
                overflows[parameter.name] = (f"{parameter.name}: indexed up to {extent - 1}, "
                                             f"{origin_} holds {count}")
                count, origin_ = extent, (f"{origin_} ({count} elements), raised to the "
                                          f"{extent} its indexing reaches at this launch")
        elif reading is not None and reading.complete and extent is not None:
            count, origin_ = max(extent, 1), "the kernel's indexing: its largest index + 1 "                                              "at this launch"
            if extent > MAX_BUFFER:
                overflows[parameter.name] = f"{parameter.name}: {extent} elements"
        elif extent is not None and extent > elements:
            count, origin_ = extent, ("the kernel's indexing where it is known (largest "
                                      f"index + 1; {reading.note})")
        else:
            count, origin_ = elements, "the element count of the size parameters or the launch"
        counts[index] = (count, origin_)
    for reading in indexing.values():
        if reading.capacity:
            extent = reading.extent(values)
            if extent is not None and extent > reading.capacity:
                overflows[f"__shared__ {reading.name}"] = (
                    f"__shared__ {reading.name}: indexed up to {extent - 1}, holds "
                    f"{reading.capacity}")
    return _Layout(dict(sizes), grid, block, origin, elements, counts, overflows, scalars)


def _fit(sizes: dict[str, int], defaulted: list[str], layout) -> tuple[_Layout, dict[str, str]]:
    """The layout of the size parameters' values, where those no launch site gives
    (``defaulted``) are lowered as far as needed, together, by halves, then each raised again
    as far as it can go, for every buffer to hold what the kernel's indexing reaches (a
    ``cudaMalloc``'s count; MAX_BUFFER elements for the others); with each lowered size's
    origin. A buffer that overflows whatever they are (the site's own values) is left so."""
    chosen = layout(sizes)
    if not chosen.overflows or not defaulted:
        return chosen, {}
    persistent = set(layout({**sizes, **{n: 1 for n in defaulted}}).overflows)

    def fits(candidate: _Layout) -> bool:
        return set(candidate.overflows) <= persistent

    if fits(chosen):
        return chosen, {}
    for shift in range(1, DEFAULT_ELEMENTS.bit_length()):
        trial = {**sizes, **{n: max(1, sizes[n] >> shift) for n in defaulted}}
        if fits(layout(trial)):
            break
    else:
        return chosen, {}
    for name in defaulted:  # each one back up, as far as every buffer still holds it
        low, high = trial[name], min(trial[name] << 1, sizes[name] + 1)  # high does not fit
        while high - low > 1:
            middle = (low + high) // 2
            if fits(layout({**trial, name: middle})):
                low = middle
            else:
                high = middle
        trial[name] = low
    why = "; ".join(message for name, message in chosen.overflows.items()
                    if name not in persistent)
    origins = {name: f"default size, lowered from {sizes[name]} until the buffers hold what "
                     f"the kernel indexes ({why})" for name in defaulted
               if trial[name] != sizes[name]}
    return layout(trial), origins


def _dynamic_shared(indexing: dict, chosen: _Layout) -> int | None:
    """Bytes of dynamic shared memory the kernel's extern __shared__ arrays reach at the
    chosen launch (they share it: the largest); None when it has none, or one is used other
    than by subscript or without a bound."""
    arrays = [reading for reading in indexing.values() if reading.element_size]
    if not arrays or not all(reading.complete and reading.indexes for reading in arrays):
        return None
    values = {"grid": chosen.grid, "block": chosen.block, "scalars": chosen.scalars}
    extents = [reading.extent(values) for reading in arrays]
    if any(extent is None for extent in extents):
        return None
    return max(extent * reading.element_size for extent, reading in zip(extents, arrays))


def _with_launch(launch, chosen: _Layout) -> str:
    """The launch site's shared-memory expression with its block written as the chosen
    launch's (``sizeof(float) * threads`` where ``threads`` is the site's block)."""
    text = launch.shared_bytes
    name = launch.block.strip()
    if re.fullmatch(r"[A-Za-z_]\w*", name):
        for axis, value in zip("xyz", chosen.block):
            text = re.sub(rf"\b{name}\s*\.\s*{axis}\b", str(value), text)
        if chosen.block[1:] == (1, 1):
            text = re.sub(rf"(?<![\w.]){name}\b(?!\s*\.)", str(chosen.block[0]), text)
    return text


def _allocations(parameters, launch, values) -> dict[int, tuple[int, str]]:
    """(element count, origin) of the pointers whose launch-site argument the file
    ``cudaMalloc``s with a constant size, by parameter index."""
    found = {}
    if launch is None:
        return found
    for index, parameter in enumerate(parameters):
        if parameter.kind != "pointer" or len(launch.arguments) <= index:
            continue
        layout = element_layout(parameter.element) if parameter.element else None
        argument = launch.arguments[index]
        allocated = values.allocated_bytes(argument)
        size = parameter.element_size or (COMPONENTS[layout[0]].size * layout[1] if layout
                                          else 0)
        if allocated and size and allocated % size == 0:
            found[index] = (allocated // size, f"cudaMalloc of {argument.strip()}")
    return found


def _shown_file(path: str, rel: str) -> str:
    """A launch site's file as the spec shows it: ``rel`` when it is the kernel's own file."""
    return rel if Path(path).as_posix().endswith("/" + rel) or path == rel else Path(path).name


def _is_integer(parameter) -> bool:
    layout = element_layout(parameter.type)
    return layout is not None and COMPONENTS[layout[0]].kind in ("int", "uint")


def _launch(launches, values):
    """(launch site, grid, block): the first site whose grid and block evaluate; else the first
    whose block does (grid None); else the first site, with neither."""
    evaluated = [(launch, values.dim3(launch.grid), values.dim3(launch.block))
                 for launch in launches]
    for launch, grid, block in evaluated:
        if grid and block:
            return launch, grid, block
    for launch, _, block in evaluated:
        if block:
            return launch, None, block
    return (launches[0] if launches else None), None, None


def _site_arguments(launch, parameters, values) -> dict[str, int | float]:
    """The launch site's scalar arguments that evaluate, by parameter name."""
    if launch is None or len(launch.arguments) != len(parameters):
        return {}
    found = {}
    for parameter, argument in zip(parameters, launch.arguments):
        if parameter.kind == "scalar":
            value = values.number(argument)
            if value is not None:
                found[parameter.name] = value
    return found


def _default_dims(names: list[str]) -> dict[str, int]:
    """Sizes for size parameters the site does not give: their product is about DEFAULT_ELEMENTS."""
    if not names:
        return {}
    each = 1 << (DEFAULT_ELEMENTS.bit_length() - 1) // len(names)
    return {name: each for name in names}


def _covering(block: tuple[int, int, int], sizes: dict[str, int],
              elements: int) -> tuple[int, int, int]:
    """A grid of ``block``s over a width and a height (2-D blocks, when the kernel takes both),
    else over the elements in x."""
    x = next((sizes[n] for n in sizes if _X_DIM.match(n)), None)
    y = next((sizes[n] for n in sizes if _Y_DIM.match(n)), None)
    if block[1] > 1 and x and y:
        return (-(-x // block[0]), -(-y // block[1]), 1)
    return (-(-elements // math.prod(block)), 1, 1)


def _template_block(kernel, arguments: list[str]) -> tuple[str, int] | None:
    """(name, value) of an integer template parameter that names the block size
    (``int BLOCK_SIZE``, ``int NUM_THREADS``...) with its value in this instantiation."""
    for declared, argument in zip(kernel.template_parameters, arguments):
        name = declared.split()[-1] if declared.split() else ""
        if (not declared.startswith(("typename", "class")) and _BLOCK_NAME.search(name)
                and re.fullmatch(r"\d+[uUlL]*", argument.strip())):
            value = int(re.sub(r"[uUlL]+$", "", argument.strip()))
            if 0 < value <= 1024:
                return name, value
    return None


def _default_launch(sizes: dict[str, int], elements: int, template_block, shrink: int = 0):
    """The launch without a site: blocks of the kernel's block-size template argument, else
    16 x 16 (a width and a height), else DEFAULT_BLOCK threads; ``shrink`` halves the default
    block's sides that many times."""
    x = next((sizes[n] for n in sizes if _X_DIM.match(n)), None)
    y = next((sizes[n] for n in sizes if _Y_DIM.match(n)), None)
    if template_block is not None:
        name, threads = template_block
        return ((-(-elements // threads), 1, 1), (threads, 1, 1),
                f"no launch site to read: blocks of {name} = {threads} threads covering "
                f"{elements} elements")
    if x and y:
        side = max(1, 16 >> shrink)
        return ((-(-x // side), -(-y // side), 1), (side, side, 1),
                f"no launch site to read: {side} x {side} blocks covering {x} x {y}")
    threads = max(1, DEFAULT_BLOCK >> shrink)
    return ((-(-elements // threads), 1, 1), (threads, 1, 1),
            f"no launch site to read: blocks of {threads} threads covering {elements} "
            "elements")


def _parameter(parameter, index: int, site_args, sizes, counts, fitted: dict[str, str],
               values):
    """(the parameter's document, why it needs a hand edit or "")."""
    name = parameter.name or f"arg{index}"
    document = {"name": name, "kind": parameter.kind, "type": parameter.type}
    if parameter.kind == "pointer":
        return _pointer(parameter, name, document, *counts[index], values)
    if parameter.kind == "scalar":
        layout = element_layout(parameter.type)
        if name in sizes:
            value, origin = sizes[name], ("launch site" if name in site_args
                                          else fitted.get(name, "default size"))
        elif name in site_args:
            value, origin = site_args[name], "launch site"
        elif layout is not None and COMPONENTS[layout[0]].kind == "float":
            value, origin = 0.5, "default value"
        else:  # integers, bool, enums: 1 is in range of each and a harmless stride or flag
            value, origin = 1, "default value"
        if layout is not None and COMPONENTS[layout[0]].kind == "float":
            value = float(value)
        elif isinstance(value, float):
            value = int(value)
        document.update(value=value, origin=origin)
        return document, ""
    if parameter.kind == "struct":
        init = struct_init(parameter)
        if init:
            document.update(init=init, origin="default value of each field (integers 1, "
                                              "floating-point 0.5), on a value-initialised "
                                              f"{plain(parameter.type)}")
            return document, ""
        why = ("the front end gives no fields of it" if not parameter.fields else
               "not all its fields are arithmetic")
        document.update(init="", origin=why)
        return document, (f"parameter {name} is a struct passed by value ({parameter.type}, "
                          f"{why}): set its init to a C++ expression of that type")
    document["origin"] = "a parameter kind the harness cannot fill"
    return document, f"parameter {name} ({parameter.type}) cannot be filled: set its init"


_C_SPELLINGS = {"bool": "bool", "i8": "signed char", "u8": "unsigned char", "i16": "short",
                "u16": "unsigned short", "i32": "int", "u32": "unsigned int", "i64": "long long",
                "u64": "unsigned long long", "f32": "float", "f64": "double"}


def struct_init(parameter) -> str:
    """A C++ expression of a struct passed by value whose data members are all arithmetic
    (vectors and arrays of them too): the struct value-initialised, then each integer member
    1 (a count or a stride that keeps loops short and indexes small) and each floating-point
    one 0.5, as for scalars; "" for any other struct (a pointer member, a nested struct, a
    half-precision or bit-field member, no fields known)."""
    statements = []
    for member in parameter.fields:
        layout = element_layout(member.type)  # arrays too: their element's components x length
        if layout is None or layout[0] not in _C_SPELLINGS or not member.name or \
                not member.size:
            return ""
        spelled = _C_SPELLINGS[layout[0]]
        value = "0.5" if COMPONENTS[layout[0]].kind == "float" else "1"
        if layout[1] == 1 and "[" not in member.type:
            statements.append(f"v.{member.name} = {value};")
        else:  # an array or vector member: each component
            statements.append(f"for (unsigned i = 0; i < sizeof(v.{member.name}) / "
                              f"sizeof({spelled}); ++i) reinterpret_cast<{spelled} *>("
                              f"&v.{member.name})[i] = {value};")
    if not statements:
        return ""
    return f"[] {{ {plain(parameter.type)} v{{}}; {' '.join(statements)} return v; }}()"


def _pointer(parameter, name: str, document: dict, count: int, origin: str, values):
    if parameter.const or not parameter.written_to:
        role = "input"
    else:
        role = "inout" if parameter.read_from else "output"
    layout = element_layout(parameter.element) if parameter.element else None
    document.update(role=role, count=count, fill="zero" if role == "output" else "random")
    why = ""
    if "*" in parameter.element or not parameter.element:
        why = f"parameter {name} points to a pointer ({parameter.type}): the harness cannot fill it"
        document.update(component="", components=1)
    elif layout is None and (fields := values.struct_layout(parameter.element,
                                                             parameter.element_size)):
        component, components = fields
        document.update(component=component, components=components,
                        range=list(DEFAULT_RANGES[component]))
        origin += f"; {plain(parameter.element)}: its fields are {components} x {component}"
    elif layout is None:
        why = (f"parameter {name} points to {plain(parameter.element)}, whose fields are not "
               "all of one arithmetic type (or not found): set its component (a type code such "
               "as f32, or bytes) and components")
        if parameter.element_size:
            why += f" ({parameter.element_size} bytes per element)"
        document.update(component="", components=1)
    else:
        component, components = layout
        expected = COMPONENTS[component].size * components
        if parameter.element_size and parameter.element_size != expected:
            why = (f"parameter {name}: {plain(parameter.element)} is {parameter.element_size} "
                   f"bytes, not {expected}: set its component")
        document.update(component=component, components=components,
                        range=list(DEFAULT_RANGES[component]))
        if COMPONENTS[component].kind in ("int", "uint") and _INDEX_NAME.search(name) \
                and role != "output":
            why = (f"parameter {name} looks like an index array: set its range, or index_of to "
                   "the buffer it indexes, so that its values stay in bounds")
    document["origin"] = origin
    return document, why


# --- writing and keeping -----------------------------------------------------------------------


def render_spec(document: dict) -> str:
    """The spec as TOML: a comment header, the digest of the rest, then the document (tables
    and arrays of tables; short arrays inline, so that a grid reads ``[128, 128, 1]``)."""
    body = _toml(document)
    digest = hashlib.sha256(body.encode()).hexdigest()[:32]
    return (f"# rocmigrate {__version__}: harness spec of kernel "
            f"{document['kernel']['name']} ({document['kernel']['file']}).\n"
            "# Edit freely: an edited spec is kept when the harnesses are generated again\n"
            "# (rocmigrate harness --force overwrites it). Fields: docs/kernel_harness.md.\n"
            f'{DIGEST_KEY} = "{digest}"\n' + body)


def _toml(document: dict, prefix: str = "") -> str:
    """TOML of a document whose tables hold scalars, arrays of scalars, tables and arrays of
    tables (tomli_w spells the scalars)."""
    lines, tables = [], []
    for key, value in document.items():
        if isinstance(value, dict) or (isinstance(value, list) and value
                                       and all(isinstance(v, dict) for v in value)):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_value(value)}\n")
    text = "".join(lines)
    for key, value in tables:
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            text += f"\n[{name}]\n" + _toml(value, f"{name}.")
        else:
            text += "".join(f"\n[[{name}]]\n" + _toml(item, f"{name}.") for item in value)
    return text


def _value(value) -> str:
    import tomli_w

    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    return tomli_w.dumps({"v": value})[4:].rstrip("\n")


def edited(text: str) -> bool:
    """Whether a spec on disk is no longer what rocmigrate wrote (its digest line is gone or
    does not match the rest)."""
    match = re.search(rf'^{DIGEST_KEY} = "([0-9a-f]+)"\n', text, re.MULTILINE)
    if match is None:
        return True
    body = text[match.end():]
    return hashlib.sha256(body.encode()).hexdigest()[:32] != match.group(1)


def write_spec(path: Path, document: dict, force: bool) -> str:
    """Write the spec; returns written | unchanged | kept (edited by hand, not ``force``d)."""
    from ..fsutil import atomic_write

    text = render_spec(document)
    if path.is_file():
        try:
            current = _read_spec(path)
        except (OSError, UnicodeDecodeError):
            current = None
        if current == text:
            return "unchanged"
        if current is not None and edited(current) and not force:
            return "kept"
    atomic_write(path, text.encode())
    return "written"


# --- reading -------------------------------------------------------------------------------------


def _read_spec(path: Path) -> str:
    """A spec's text, newlines made ``\\n`` (as ``read_text`` does); a regular file of at most
    SPEC_LIMIT bytes (else an OSError)."""
    text = read_regular(path, SPEC_LIMIT).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def load_spec(path: Path) -> HarnessSpec:
    """Read and check a spec; SpecError says what is wrong and where."""
    try:
        document = tomllib.loads(_read_spec(path))
    except OSError as err:
        raise SpecError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise SpecError(f"{path}: cannot read: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"{path}: not TOML: {err}") from None
    return spec_from(document, str(path))


def needs_edit_of(path: Path) -> str:
    """The ``needs_edit`` line of a spec, read without checking the rest ("" when absent or
    unreadable): a spec waiting for an edit may not load until then."""
    try:
        value = tomllib.loads(_read_spec(path)).get("needs_edit", "")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    return value if isinstance(value, str) else ""


def spec_from(document: dict, where: str) -> HarnessSpec:
    kernel, launch, run = (_table(document, key, where) for key in ("kernel", "launch", "run"))
    parameters = document.get("parameters", [])
    if not isinstance(parameters, list):
        raise SpecError(f"{where}: parameters must be an array of tables")
    tolerances = {kind: dict(DEFAULT_TOLERANCES[kind]) for kind in FLOATING}
    for kind, table in _table(document, "tolerance", where, required=False).items():
        if kind not in tolerances or not isinstance(table, dict):
            raise SpecError(f"{where}: tolerance.{kind}: expected one of {', '.join(FLOATING)}")
        for key, value in table.items():
            if key not in ("ulp", "relative", "absolute") or not _number(value) or value < 0:
                raise SpecError(f"{where}: tolerance.{kind}.{key} must be ulp, relative or "
                                "absolute, a number >= 0")
            tolerances[kind][key] = value
    specs = tuple(_parameter_spec(p, f"{where}: parameters[{i}]")
                  for i, p in enumerate(parameters))
    names = [p.name for p in specs]
    for p in specs:
        if p.index_of and p.index_of not in names:
            raise SpecError(f"{where}: {p.name}.index_of names no parameter ({p.index_of})")
    return HarnessSpec(
        name=_string(kernel, "harness", where), kernel=_string(kernel, "name", where),
        file=_string(kernel, "file", where),
        template_arguments=tuple(_strings(kernel, "template_arguments", where)),
        grid=_dims(launch, "grid", where), block=_dims(launch, "block", where),
        shared_bytes=_integer(launch, "shared_bytes", where, 0),
        seed=_integer(run, "seed", where, 0), warmup=_integer(run, "warmup", where, 0),
        repetitions=_integer(run, "repetitions", where, 1),
        parameters=specs, tolerances=tolerances,
        needs_edit=str(document.get("needs_edit", "")))


def _parameter_spec(table, where: str) -> ParameterSpec:
    if not isinstance(table, dict):
        raise SpecError(f"{where}: expected a table")
    name, kind = _string(table, "name", where), _string(table, "kind", where)
    where = f"{where} ({name})"
    if kind == "pointer":
        component = table.get("component", "")
        if component not in COMPONENTS:
            raise SpecError(f"{where}: component must be one of {', '.join(COMPONENTS)}")
        role, fill = table.get("role", "input"), table.get("fill", "random")
        if role not in ROLES or fill not in FILLS:
            raise SpecError(f"{where}: role must be one of {', '.join(ROLES)}, fill one of "
                            f"{', '.join(FILLS)}")
        value_range = table.get("range", DEFAULT_RANGES.get(component, [0, 0]))
        if (not isinstance(value_range, list) or len(value_range) != 2
                or not all(_number(v) and math.isfinite(v) for v in value_range)
                or value_range[0] > value_range[1]):
            raise SpecError(f"{where}: range must be [low, high], finite, with low <= high")
        return ParameterSpec(name, kind, _string(table, "type", where), role, component,
                             _integer(table, "components", where, 1),
                             _integer(table, "count", where, 1), fill, tuple(value_range),
                             str(table.get("index_of", "")))
    if kind == "scalar":
        if "init" in table and table["init"]:
            return ParameterSpec(name, kind, _string(table, "type", where),
                                 init=str(table["init"]))
        value = table.get("value")
        if not _number(value) and not isinstance(value, bool):
            raise SpecError(f"{where}: value must be a number")
        layout = element_layout(_string(table, "type", where))
        return ParameterSpec(name, kind, table["type"], component=layout[0] if layout else "",
                             value=value)
    init = table.get("init", "")
    if not isinstance(init, str) or not init.strip():
        raise SpecError(f"{where}: a {kind} parameter needs init: a C++ expression of its type")
    return ParameterSpec(name, kind, _string(table, "type", where), init=init)


def _table(document: dict, key: str, where: str, required: bool = True) -> dict:
    value = document.get(key, None if required else {})
    if not isinstance(value, dict):
        raise SpecError(f"{where}: [{key}] is missing or not a table")
    return value


def _string(table: dict, key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise SpecError(f"{where}: {key} must be a non-empty string")
    return value


def _strings(table: dict, key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SpecError(f"{where}: {key} must be a list of strings")
    return value


def _integer(table: dict, key: str, where: str, minimum: int) -> int:
    value = table.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise SpecError(f"{where}: {key} must be an integer >= {minimum}")
    return value


def _dims(table: dict, key: str, where: str) -> tuple[int, int, int]:
    value = table.get(key)
    if (not isinstance(value, list) or not 1 <= len(value) <= 3
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)):
        raise SpecError(f"{where}: launch.{key} must be 1 to 3 positive integers")
    return tuple(value + [1] * (3 - len(value)))  # type: ignore[return-value]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
