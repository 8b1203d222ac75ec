"""Harness sources from specs: ``templates/harness/harness.cu.j2`` rendered per side.

The CUDA side includes the original file, the HIP side the converted one; both are the same text
but for the runtime prefix (cuda/hip), so their inputs and launches match. One source holds the
harnesses of one spec or of every spec of a translation unit (so that the unit is compiled once
per side), each a function that ``main`` picks by the spec's path. A file with its own
``main`` is included with ``main`` defined to ``rocmigrate_original_main`` (and undefined after),
so the harness's ``main`` is the program's. The spec's template arguments and ``init``
expressions are written in CUDA; ``hip_spelling`` converts them for the HIP side with the engine
of `rocmigrate convert` (``__nv_bfloat16`` -> ``__hip_bfloat16``), as the kernel file itself is.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .. import __version__
from .spec import HarnessSpec
from .types import COMPONENTS

SIDES = {"cuda": "cuda", "hip": "hip"}  # side -> runtime prefix
_MAIN = re.compile(rb"\bint\s+main\s*\(")
_MASK = (1 << 64) - 1


def has_main(data: bytes) -> bool:
    return _MAIN.search(data) is not None


def buffer_seed(seed: int, index: int) -> int:
    """The generator state a buffer starts from: distinct per buffer, fixed by the spec's seed."""
    return (seed * 0xD1342543DE82EF95 + (index + 1) * 0x9E3779B97F4A7C15) & _MASK


def render_harness(spec: HarnessSpec, side: str, include: str, includes_main: bool,
                   selector: str | None = None, launch_syntax: str = "chevron") -> str:
    """The harness source of ``side`` (cuda | hip) including the file ``include``, its harness
    run by the name ``selector`` (default: the spec's name)."""
    return render_harnesses([(selector or spec.name, spec)], side, include, includes_main,
                            launch_syntax)


def render_harnesses(harnesses: list[tuple[str, HarnessSpec]], side: str, include: str,
                     includes_main: bool, launch_syntax: str = "chevron") -> str:
    """One source of ``side`` holding the harness of each (selector, spec), all including the
    file ``include`` once; its ``main`` runs the harness its first argument names. The HIP side
    launches as the conversion's ``launch_syntax`` does (ggl: ``hipLaunchKernelGGL``, which a
    C++ compiler reads: HIP's CPU runtime); the CUDA side always with ``<<<>>>``."""
    from ..templating import render

    return render("harness/harness.cu.j2", version=__version__, side=side, rt=SIDES[side],
                  include=include, unit=include, has_main=includes_main,
                  ggl=side == "hip" and launch_syntax == "ggl",
                  harnesses=[_harness(selector, spec) for selector, spec in harnesses])


def _harness(selector: str, spec: HarnessSpec) -> dict:
    """What the template needs of one harness: its buffers and launch arguments."""
    counts = {p.name: p.count for p in spec.parameters if p.kind == "pointer"}
    buffers, arguments = [], []
    for parameter in spec.parameters:
        if parameter.kind == "pointer":
            low, high = parameter.value_range
            if parameter.index_of:
                low, high = 0, max(counts[parameter.index_of] - 1, 0)
            integer = COMPONENTS[parameter.component].kind in ("int", "uint", "bool")
            buffers.append({"name": parameter.name, "code": COMPONENTS[parameter.component].code,
                            "components": parameter.components, "count": parameter.count,
                            "random": parameter.fill == "random",
                            "low": _literal(low, integer), "high": _literal(high, integer),
                            "seed": buffer_seed(spec.seed, len(buffers)),
                            "written": parameter.written})
            device = f"rocmigrate_device[{len(buffers) - 1}]"
            arguments.append(f"rocmigrate_harness::Pointer{{{device}}}")
        elif parameter.init:
            arguments.append(f"({parameter.init})")
        else:
            arguments.append(_scalar(parameter))
    return {"selector": selector, "selector_literal": c_string(selector), "spec": spec,
            "buffers": buffers, "arguments": arguments, "kernel": kernel_expression(spec)}


def c_string(text: str) -> str:
    """``text`` as the inside of a C string literal: printable ASCII as it is, every other
    byte of its UTF-8 as a three-digit octal escape."""
    return "".join(chr(byte) if 32 <= byte < 127 and byte not in b'"\\?' else f"\\{byte:03o}"
                   for byte in text.encode())


def hip_spelling(spec: HarnessSpec, settings) -> HarnessSpec:
    """The spec with its template arguments and ``init`` expressions as the conversion (at
    ``settings``) spells them; each text the engine cannot convert stays as written."""
    from ..convert import convert_bytes

    texts = [*spec.template_arguments, *(p.init for p in spec.parameters if p.init)]
    if not texts:
        return spec
    lines = "".join(f"using rocmigrate_spelling_{i} = rocmigrate_list<{text}>;\n"
                    for i, text in enumerate(texts))
    result = convert_bytes("rocmigrate_spelling.cu", lines.encode(), settings)
    output = result.output.decode("utf-8", "replace") if result.output else ""
    found = dict(re.findall(r"^using rocmigrate_spelling_(\d+) = rocmigrate_list<(.*)>;$",
                            output, re.MULTILINE))
    converted = [found.get(str(i), text) for i, text in enumerate(texts)]
    arguments = tuple(converted[:len(spec.template_arguments)])
    inits = iter(converted[len(spec.template_arguments):])
    parameters = tuple(replace(p, init=next(inits)) if p.init else p for p in spec.parameters)
    return replace(spec, template_arguments=arguments, parameters=parameters)


def kernel_expression(spec: HarnessSpec) -> str:
    """How the harness names the kernel: qualified, with its template arguments."""
    name = spec.kernel.replace("(anonymous namespace)::", "")
    return name + (f"<{', '.join(spec.template_arguments)}>" if spec.template_arguments else "")


def _scalar(parameter) -> str:
    value = parameter.value
    kind = COMPONENTS[parameter.component].kind if parameter.component else "int"
    if kind == "float":
        return f"rocmigrate_harness::Value<double>{{{float(value)!r}}}"
    if kind == "uint":
        return f"rocmigrate_harness::Value<unsigned long long>{{{int(value)}ull}}"
    return f"rocmigrate_harness::Value<long long>{{{int(value)}ll}}"


def _literal(value: float, integer: bool) -> str:
    """A range bound as a C++ double literal (integers exactly)."""
    return f"{int(value)}.0" if integer or float(value).is_integer() else repr(float(value))

