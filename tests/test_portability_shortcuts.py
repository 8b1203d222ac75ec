"""The portability rules' short cuts answer as the scans they replace (random texts of the
pieces those scans care about)."""

from __future__ import annotations

from conftest import rule_context
from migrator.semantic.scopes import function_at
from rules.portability.host_device_math import (_DEVICE_HEAD, _NOT_BEFORE, _PATTERNS,
                                                _host_calls)
from strategies import random_texts

_MATH_PIECES = [b"rsqrtf(x)", b"rsqrtf", b"norm3df (a, b, c)", b"__popc(m)", b"__popc", b"(",
                b")", b"x", b"_", b".", b"::", b" ", b"\n", b";", b"{", b"}", b"void f() ",
                b"__device__ float g() ", b"__global__ void k() ", b"HOST_DEVICE int h() ",
                b"#define R rsqrtf(x)\n", b"// rsqrtf(x)\n", b"\"__popc(m)\"", b"auto l = [] ",
                b"return ", b"sincospif(a, s, c)", b"erfinvf"]


def _searched_calls(ctx) -> list[int]:
    """_host_calls as a search of each stretch of host code finds them."""
    code, found, at = ctx.code, [], 0
    function_at(ctx, 0)
    stretches = []
    for body in ctx.cache["scopes.functions"]:
        if _DEVICE_HEAD.search(code, body.head, body.open):
            stretches.append((at, body.head))
            at = body.close
    for start, end in [*stretches, (at, len(code))]:
        calls = [match.start() for pattern in _PATTERNS for match in pattern.finditer(code, start, end)
                 if match.start() == 0 or code[match.start() - 1] not in _NOT_BEFORE]
        found += [call for call in sorted(calls) if not ctx.in_directive(call)]
    return found


def test_host_calls_are_the_searches_of_host_code():
    met = 0
    for data in random_texts(_MATH_PIECES, seed=3, count=3000):
        wanted = _searched_calls(rule_context(data))
        assert list(_host_calls(rule_context(data))) == wanted, data
        met += bool(wanted)
    assert met > 1000  # the texts hold host calls, not only misses
