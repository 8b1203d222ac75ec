"""NVTX's C API as no-ops: the generated rocmigrate_nvtx.h declares NVTX 3's functions (CUDA 13's
nvToolsExt.h, nvToolsExtCuda.h, nvToolsExtCudaRt.h, but for the resource API) with their return
types, returns what NVTX itself returns with no tool attached, builds as C and C++, and HDR001
writes it for NVTX's includes."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import require_path, require_tool
from migrator import apitables, support
from migrator.convert import convert_bytes
from migrator.settings import Settings

HEADER = "rocmigrate_nvtx.h"
NVTX = Path("/usr/local/cuda/include/nvtx3")
NVTX_HEADERS = ("nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h")
NVTX3_HPP = "nvtx3.hpp"  # the C++ API
NOT_WRITTEN = {"nvtxDomainResourceCreate", "nvtxDomainResourceDestroy"}  # no user code seen
_OURS = re.compile(r"ROCMIGRATE_NVTX_FN ([\w ]+?) (nvtx\w+)\(")
_NVTX = re.compile(r"NVTX_DECLSPEC ([\w ]+?) NVTX_API (nvtx\w+)\(")


def _rendered() -> str:
    return support.render(HEADER, Settings()).decode()


def test_every_quoted_header_of_the_table_is_a_support_header():
    quoted = {entry.hip_header.strip('"') for entry in apitables.load().headers.values()
              if entry.hip_header.startswith('"')}
    assert HEADER in quoted and quoted <= set(support.available())


def test_header_declares_nvtx_functions_with_their_return_types():
    ours = {name: result for result, name in _OURS.findall(_rendered())}
    theirs = {}
    for name in NVTX_HEADERS:
        text = require_path(NVTX / name, "CUDA 13's NVTX headers").read_text(encoding="utf-8")
        theirs.update({function: result for result, function in _NVTX.findall(text)})
    assert set(ours) == set(theirs) - NOT_WRITTEN
    assert all(ours[name] == theirs[name] for name in ours)


def test_includes_become_the_support_header():
    source = (b"#include <nvtx3/nvToolsExt.h>\n#include <nvtx3/nvtx3.hpp>\n"
              b'void f() { nvtxRangePushA("a"); nvtxRangePop(); }\n')
    for rocm in ((5, 2, 0), (6, 4, 0)):
        result = convert_bytes("f.cpp", source, Settings(rocm=rocm))
        assert result.output.startswith(b'#include "rocmigrate_nvtx.h"\nvoid f()')
        assert result.support == (HEADER,)


_PROGRAM = """\
#include <stdio.h>
#include {include}
int main(void) {{
  nvtxEventAttributes_t attributes = {{0}};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "ex";
  nvtxDomainHandle_t domain = nvtxDomainCreateA("domain");
  printf("%d %d %d %d\\n", nvtxRangePushA("a"), nvtxRangePushEx(&attributes), nvtxRangePop(),
         nvtxDomainRangePushEx(domain, &attributes));
  printf("%llu %llu\\n", (unsigned long long)nvtxRangeStartA("b"),
         (unsigned long long)nvtxRangeStartEx(&attributes));
  printf("%d %d %d\\n", domain == NULL, nvtxDomainRegisterStringA(domain, "s") == NULL,
         (int)attributes.size);
  nvtxMarkA("mark");
  nvtxNameOsThreadA(0, "main");
  nvtxRangeEnd(0);
  nvtxDomainDestroy(domain);
  return 0;
}}
"""


def _run(compiler: str, tmp_path: Path, name: str, include: str, *flags: str) -> str:
    source = tmp_path / f"{name}.c"
    source.write_text(_PROGRAM.format(include=include), encoding="utf-8")
    built = subprocess.run([compiler, *flags, "-Wall", "-Werror", "-I", str(tmp_path),
                            str(source), "-o", str(tmp_path / name), "-ldl"],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    quiet = {key: value for key, value in os.environ.items() if not key.startswith("NVTX_")}
    ran = subprocess.run([str(tmp_path / name)], capture_output=True, text=True, timeout=60,
                         env=quiet)  # no NVTX_INJECTION64_PATH: no tool attached
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


@pytest.mark.slow
def test_no_ops_return_what_nvtx_returns_without_a_tool(tmp_path: Path):
    """The same program on NVTX 3's own header-only implementation (no tool attached: no
    NVTX_INJECTION64_PATH) and on the generated header, as C and as C++."""
    gcc, gxx = require_tool("gcc"), require_tool("g++")
    require_path(NVTX / "nvToolsExt.h", "CUDA 13's NVTX headers")
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    theirs = _run(gcc, tmp_path, "theirs", "<nvtx3/nvToolsExt.h>", "-std=c99", "-I",
                  str(NVTX.parent))
    assert theirs.splitlines()[0] == "-2 -2 -2 -2"
    assert _run(gcc, tmp_path, "ours_c", f'"{HEADER}"', "-std=c99") == theirs
    assert _run(gxx, tmp_path, "ours_cpp", f'"{HEADER}"', "-x", "c++", "-std=c++11") == theirs


# roctracer's roctx.h as its documentation declares it (no machine here has roctracer), with a
# stand-in library that prints each call
_ROCTX_H = """\
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef uint64_t roctx_range_id_t;
void roctxMarkA(const char* message);
int roctxRangePushA(const char* message);
int roctxRangePop();
roctx_range_id_t roctxRangeStartA(const char* message);
void roctxRangeStop(roctx_range_id_t id);
#ifdef __cplusplus
}
#endif
"""
_ROCTX_C = """\
#include <stdio.h>
#include <roctracer/roctx.h>
static int depth = 0;
void roctxMarkA(const char* message) { printf("mark %s\\n", message); }
int roctxRangePushA(const char* message) { printf("push %s\\n", message); return depth++; }
int roctxRangePop() { printf("pop\\n"); return --depth; }
roctx_range_id_t roctxRangeStartA(const char* message) { printf("start %s\\n", message); return 7; }
void roctxRangeStop(roctx_range_id_t id) { printf("stop %d\\n", (int)id); }
"""
_TRACED = """\
#include <stdio.h>
#include "rocmigrate_nvtx.h"
int main(void) {
  nvtxEventAttributes_t ascii = {0}, wide = {0};
  ascii.messageType = NVTX_MESSAGE_TYPE_ASCII;
  ascii.message.ascii = "ex";
  wide.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  wide.message.unicode = L"wide";
  printf("%d\\n", nvtxRangePushA("a"));
  printf("%d\\n", nvtxRangePushEx(&ascii));
  printf("%d\\n", nvtxDomainRangePushEx(nvtxDomainCreateA("d"), &wide));
  printf("%d\\n", nvtxRangePop());
  printf("%d\\n", nvtxDomainRangePop(NULL));
  printf("%d\\n", nvtxRangePop());
  nvtxRangeId_t id = nvtxRangeStartEx(&ascii);
  nvtxRangeEnd(id);
  nvtxMarkA("m");
  nvtxMarkEx(&wide);
  nvtxNameOsThreadA(0, "main");
  return 0;
}
"""


@pytest.mark.slow
def test_roctx_gets_the_ranges_and_marks_where_asked(tmp_path: Path):
    gcc = require_tool("gcc")
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    (tmp_path / "roctracer").mkdir()
    (tmp_path / "roctracer" / "roctx.h").write_text(_ROCTX_H, encoding="utf-8")
    (tmp_path / "roctx.c").write_text(_ROCTX_C, encoding="utf-8")
    (tmp_path / "traced.c").write_text(_TRACED, encoding="utf-8")
    built = subprocess.run([gcc, "-std=c99", "-Wall", "-Werror", "-DROCMIGRATE_NVTX_ROCTX", "-I",
                            str(tmp_path), str(tmp_path / "traced.c"), str(tmp_path / "roctx.c"),
                            "-o", str(tmp_path / "traced")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(tmp_path / "traced")], capture_output=True, text=True, timeout=60)
    assert ran.stdout.splitlines() == [
        "push a", "0", "push ex", "1", "push ", "2",  # a wide message: pushed unnamed
        "pop", "2", "pop", "1", "pop", "0",
        "start ex", "stop 7", "mark m", "mark "]


# the C++ API as its documentation uses it (nvtx3.hpp's comments): every form must build with
# NVTX's own header as with the generated one
_CPP_USES = """\
#include <string>
#ifdef REAL
#include <nvtx3/nvtx3.hpp>
#else
#include "rocmigrate_nvtx.h"
#endif
struct my_domain { static constexpr char const* name{"my_domain"}; };
struct my_category { static constexpr char const* name{"cat"}; static constexpr uint32_t id{1}; };
struct my_message { static constexpr char const* message{"registered"}; };
using my_range = nvtx3::scoped_range_in<my_domain>;
void work(int n) {
  (void)n;
  NVTX3_FUNC_RANGE();
  nvtx3::scoped_range r0;
  nvtx3::scoped_range r1{"name"};
  nvtx3::scoped_range r2{std::string{"name"}};
  my_range r3{"in domain", nvtx3::rgb{127, 255, 0}};
  nvtx3::event_attributes attr{"msg", nvtx3::rgb{127, 255, 0}, nvtx3::payload{42},
                               nvtx3::category{1}};
  nvtx3::scoped_range r4{attr};
  auto const& cat = nvtx3::named_category_in<my_domain>::get<my_category>();
  auto const& msg = nvtx3::registered_string_in<my_domain>::get<my_message>();
  nvtx3::scoped_range_in<my_domain> r5{msg, cat, nvtx3::argb{0xff, 1, 2, 3}};
  nvtx3::mark("mark");
  nvtx3::mark_in<my_domain>("mark", nvtx3::color{0xFF00FF00});
  nvtx3::range_handle h = nvtx3::start_range("start", nvtx3::payload{3.5});
  nvtx3::end_range(h);
  auto h2 = nvtx3::start_range_in<my_domain>(attr);
  nvtx3::end_range_in<my_domain>(h2);
  nvtx3::unique_range u{"unique"};
  nvtx3::unique_range moved{std::move(u)};
  bool none = !nvtx3::range_handle{};
  (void)none;
  nvtxRangePushA("c api too");
  nvtxRangePop();
}
void other(int n) { NVTX3_FUNC_RANGE_IN(my_domain); (void)n; }
void third(int n) { NVTX3_FUNC_RANGE_IF(n > 2); }
"""


@pytest.mark.slow
def test_cpp_api_builds_where_nvtxs_own_does(tmp_path: Path):
    gxx = require_tool("g++")
    require_path(NVTX / NVTX3_HPP, "CUDA 13's NVTX headers")
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    (tmp_path / "uses.cpp").write_text(_CPP_USES, encoding="utf-8")
    for flags in (("-DREAL", "-I", str(NVTX.parent)), ("-I", str(tmp_path))):
        built = subprocess.run([gxx, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                                *flags, str(tmp_path / "uses.cpp")],
                               capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, (flags, built.stderr[-3000:])
