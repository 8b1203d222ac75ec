"""HDR003 includes the runtime under the project's own switch when all of a header's device code
is behind it (HeCBench pad): the converted header then compiles for its device includer, which
defines the switch, and for a host-only includer whose own macros (``#define T float``) would
break HIP's templates if the runtime came in after them."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import hipcc_compile

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/rules/HDR001/gpu_switch.fixed.h"

INCLUDERS = {
    "device.cu": '#define _GPU_COMPILER_\n#include "gpu_switch.h"\n'
                 "__global__ void k(Partitioner p) { next_task(&p); }\n",
    "host.cpp": '#define T float\n#include "gpu_switch.h"\n'
                "int run() { Partitioner p{1}; return first_task(&p) + next_task(&p); }\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("includer", sorted(INCLUDERS))
def test_both_includers_of_the_converted_header_compile(includer, tmp_path):
    (tmp_path / "gpu_switch.h").write_bytes(FIXTURE.read_bytes())
    source = tmp_path / includer
    source.write_text(INCLUDERS[includer])
    result = hipcc_compile(source, tmp_path, ("-I", str(tmp_path)))
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_include_is_under_the_switch():
    text = FIXTURE.read_text()
    assert "#ifdef _GPU_COMPILER_\n#include <hip/hip_runtime.h>\n#endif\n" in text
    assert text.count("hip/hip_runtime.h") == 1
