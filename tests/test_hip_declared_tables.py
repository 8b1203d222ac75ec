"""The tables of what HIP declares (rules/portability/*.tsv): the generated ones agree with a
fresh run of scripts/gen_hip_declared.py on the real headers, and the device-only math list
with hipcc."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_path, require_tool

PORTABILITY = ROOT / "rules" / "portability"
GENERATED = ("hip_atomic_overloads.tsv", "device_prop_fields.tsv", "cooperative_groups.tsv")
HIP64 = ROOT.parent / "shared" / "data" / "hip-6.4" / "include"


def test_generated_tables_match_the_headers(tmp_path: Path):
    require_path(Path("/usr/include/hip/hip_runtime_api.h"), "the HIP 5.2 headers")
    require_path(HIP64 / "hip" / "hip_runtime_api.h", "the HIP 6.4.3 headers")
    require_path(Path("/usr/local/cuda/include/driver_types.h"), "the CUDA toolkit headers")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_hip_declared.py"), "--out",
                    str(tmp_path)], check=True)
    for name in GENERATED:
        assert (tmp_path / name).read_text() == (PORTABILITY / name).read_text(), name


def test_generated_tables_hold_what_the_rules_rely_on():
    from rules.portability._tables import has, table

    rows = {(r["name"], r["parameters"]): r for r in table("hip_atomic_overloads.tsv")}
    assert has(rows["atomicAdd", "double*, double"], (5, 2, 0))
    long_max = rows["atomicMax", "long long*, long long"]
    assert not has(long_max, (5, 2, 0)) and has(long_max, (6, 4, 0))
    fields = {r["field"]: r for r in table("device_prop_fields.tsv")}
    assert not has(fields["asyncEngineCount"], (6, 0, 0)) and has(fields["asyncEngineCount"], (6, 4, 0))
    assert has(fields["multiProcessorCount"], (5, 2, 0))
    groups = {r["name"]: r for r in table("cooperative_groups.tsv")}
    assert has(groups["meta_group_rank"], (6, 4, 0)) and not has(groups["meta_group_rank"], (5, 2, 0))
    assert not has(groups["reduce"], (6, 4, 0)) and has(groups["thread_rank"], (5, 2, 0))


@pytest.mark.slow
def test_device_only_math_is_device_only_for_hipcc(tmp_path: Path):
    """Each listed name is rejected in a host function by hipcc 5.2; the C library's names a
    host function may call are not listed."""
    from rules.portability._tables import table

    hipcc = require_tool("hipcc")
    names = [row["name"] for row in table("device_only_math.tsv")]
    assert not {"sqrtf", "expf", "sinf", "__expf", "fmaf", "hypotf"} & set(names)
    source = tmp_path / "host.hip"
    source.write_text("#include <hip/hip_runtime.h>\n#include <cmath>\n" + "".join(
        f"void h{i}() {{ (void)&::{name}; }}\n" for i, name in enumerate(names)))
    result = subprocess.run([hipcc, "--offload-arch=gfx90a", "-ferror-limit=0", "-fsyntax-only",
                             str(source)], capture_output=True, text=True,
                            env={**os.environ, "HIP_PLATFORM": "amd"})
    rejected = {line.split("'")[1] for line in result.stderr.splitlines()
                if "reference to __device__ function" in line}
    assert rejected == set(names)


def test_device_only_names_are_found_as_whole_calls():
    """HMT001's patterns (one per two-byte prefix, prefixes factored out) find each listed
    name called, and no name that merely starts or ends like one, nor a member."""
    from migrator.apitables import load
    from migrator.rule import RuleContext
    from migrator.settings import Settings
    from migrator.source import Source
    from rules.portability._tables import table
    from rules.portability.host_device_math import _host_calls

    names = [row["name"].encode() for row in table("device_only_math.tsv")]
    text = b"".join(b"y = " + n + b" (x); y = " + n + b"_mine(x); y = s." + n + b"(x); y = my" + n
                    + b"(x);\n" for n in names)
    ctx = RuleContext(Source("calls.cpp", text), Settings(), load())
    found = [text[at : text.index(b" (", at)] for at in _host_calls(ctx)]  # no function: all host
    assert found == names


def test_an_overload_only_hip_6_4_defines_is_marked_only_there():
    """RDF001 reads the target's column: atomicMax(long long*, long long) is HIP 6.4's, not
    5.2's (a definition of it is a redefinition at 6.4 only)."""
    from migrator.apitables import load
    from migrator.rule import RuleContext
    from migrator.settings import Settings
    from migrator.source import Source
    from rules.portability.builtin_redefinition import BuiltinRedefinition

    text = b"__device__ long long atomicMax(long long* a, long long v) { return v; }\n"
    found = {}
    for rocm in ((5, 2, 0), (6, 4, 0)):
        ctx = RuleContext(Source("shim.cu", text), Settings(rocm=rocm), load())
        found[rocm] = [d.code for d in BuiltinRedefinition().check(ctx)]
    assert found == {(5, 2, 0): [], (6, 4, 0): ["RDF001"]}
