"""Reading rule fixtures: settings header, ``// expect: CODE`` annotations (``# expect: CODE`` in
build files)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from migrator.settings import Settings
from migrator.versions import parse_version

# in a source fixture's comments, or a build file's ('#')
_SETTINGS = re.compile(rb"(?://|#)\s*rocmigrate-fixture:\s*(.*)")
_EXPECT = re.compile(rb"(?://|/\*|#)\s*expect:\s*([A-Z0-9, ]+)")


@dataclass
class RuleFixture:
    path: Path
    expected_path: Path
    code: str
    settings: Settings
    compile: bool
    expectations: list[tuple[int, str]]  # (line, code), sorted
    input_compiles: bool = True
    hip64: bool = True  # converted at ROCm 6.4 it parses against HIP 6.4 (no: written for HIP 5.x)
    also: tuple[str, ...] = ()  # further rule codes run with the fixture's rule
    # hip64=yes written out: parsed against HIP 6.4 even where hipcc 5.2 cannot compile it
    hip64_only: bool = False


def load_fixture(path: Path) -> RuleFixture:
    data = path.read_bytes()
    options = {}
    match = _SETTINGS.search(data)
    if match:
        for item in match.group(1).decode().split():
            key, _, value = item.partition("=")
            options[key] = value
    settings = Settings(
        rocm=parse_version(options.get("rocm", "6.4")),
        launch_syntax=options.get("launch_syntax", "chevron"),
        rename_ext=options.get("rename_ext") == "yes",
        unsafe_fixes=options.get("unsafe") == "yes",
        wavefront_size=int(options.get("wavefront", "64")),
        roc=options.get("roc") == "yes",
        dnn=options.get("dnn", "report"),
    )
    if options.get("clang") == "yes":  # --clang: libclang reads the fixture in its folder
        settings = replace(settings, clang_root=path.parent.resolve())
    if "offload_arch" in options:  # build-file rules map CUDA architectures to these
        settings = replace(settings, offload_archs=tuple(options["offload_arch"].split(",")))
    expectations = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        found = _EXPECT.search(line)
        if found:
            for code in found.group(1).decode().split(","):
                if code.strip():
                    expectations.append((number + 1, code.strip()))
    stem = path.name[: -len("".join(path.suffixes))]
    expected = path.with_name(stem + ".fixed" + "".join(path.suffixes))
    return RuleFixture(path, expected, path.parent.name, settings,
                       options.get("compile", "yes") == "yes", sorted(expectations),
                       options.get("input_compiles", "yes") == "yes",
                       options.get("hip64", "yes") == "yes",
                       tuple(c for c in options.get("also", "").split(",") if c),
                       hip64_only=options.get("hip64") == "yes")
