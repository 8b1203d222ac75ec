"""Per-file cost on hard input: does converting one file stay near-linear in its size?

Each shape below writes a file that stresses one scan of the converter (unclosed literals, one
huge logical line, thousands of findings in one function...). The script converts every shape
at size N and 2N, in this process (``convert_bytes``, what a worker runs per file: interpreter
start-up, the rule tables' first load and a first small file are left out), and prints the
seconds, their ratio and a verdict: PASS when the file at N (the size issue 10 reported, or
one of that order) converts in at most 1 s and doubling the size at most 2.6x the time (linear
work gives about 2; quadratic work gives about 4; under 0.1 s at 2N the ratio is not judged).

    .venv/bin/python benchmarks/hard_input_bench.py               # every shape
    .venv/bin/python benchmarks/hard_input_bench.py raw streams   # some shapes
    .venv/bin/python benchmarks/hard_input_bench.py --scale 0.25  # smaller sizes, quicker

The timings are wall clock, the best of ``--repeat`` runs: run it on an idle machine.

With ``--count`` it counts work instead of timing it (Python calls and bytes scanned by the
converter's regexes, see ``_Meter``): the counts are the same on any machine, loaded or not,
and PASS is each count growing at most 2.6x from N to 2N. tests/test_hard_input.py runs every
shape so, at a sixteenth of its size N (``--json``: one JSON record per shape).

    .venv/bin/python benchmarks/hard_input_bench.py --count --scale 0.0625 --json
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MAX_SECONDS = 1.0
MAX_RATIO = 2.6
TOO_FAST_TO_TELL = 0.1  # seconds at 2N under which the ratio is noise, not growth

RUNTIME = "#include <cuda_runtime.h>\n"


def _function(body: str) -> str:
    return RUNTIME + "void f(float* d, float* h, size_t n) {\n" + body + "}\n"


def _kernel(body: str) -> str:
    return RUNTIME + "__global__ void k(float* d, int n) {\n" + body + "}\n"


# name -> (size N, generator of the file's text for a size)
SHAPES = {
    # the four reported in issue 10
    "raw": (8000, lambda n: 'R"x(\n' * n),
    "define": (8000, lambda n: RUNTIME + "#define M \\\n"
               + "v += __shfl_down_sync(0xffffffff, v, 1); \\\n" * n + "\n"),
    "streams": (800, lambda n: _function("".join(
        f"cudaStream_t s{i}; cudaStreamCreate(&s{i});\n" for i in range(n)))),
    "line": (40000, lambda n: RUNTIME + "void f(){ " + "cudaDeviceSynchronize(); " * n + "}\n"),
    # more shapes of the same kinds
    "stream_reuse": (1000, lambda n: RUNTIME + "void f() { cudaStream_t s; "
                     + "cudaStreamCreate(&s); " * n + "}\n"),
    "stream_work": (500, lambda n: _function("".join(
        f"cudaStream_t s{i}; cudaStreamCreate(&s{i});\n"
        f"cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s{i});\ncudaStreamSynchronize(s{i});\n"
        for i in range(n)))),
    "raw_delimiters": (8000, lambda n: "".join(f'R"d{i}(\n' for i in range(n))),
    "string_escapes": (100000, lambda n: '"' + '\\"' * n + "\n"),
    "define_streams": (8000, lambda n: RUNTIME + "#define M \\\n"
                       + "cudaStreamCreate(&s); \\\n" * n + "\n"),
    "define_markers": (8000, lambda n: RUNTIME + "#define M \\\n"
                       + "cudaMemcpyToSymbol(sym, b, n); \\\n" * n + "\n"),
    "define_memcpy": (8000, lambda n: RUNTIME + "#define M \\\n"
                      + "cudaMemcpy(a, b, n, cudaMemcpyHostToDevice); \\\n" * n + "\n"),
    "line_shuffles": (20000, lambda n: RUNTIME + "__global__ void k(float v){ "
                      + "v += __shfl_down_sync(0xffffffff, v, 1); " * n + "}\n"),
    # one line of copies on a stream the function creates: STM001 reads each copy's stream
    # argument (a per-line-text memo once copied the rest of the line per call: quadratic)
    "line_stream_copies": (10000, lambda n: RUNTIME + "void f(float* a, float* b, int n){ "
                           "cudaStream_t s; cudaStreamCreate(&s); "
                           + "cudaMemcpyAsync(a, b, n, cudaMemcpyDeviceToDevice, s); " * n
                           + "}\n"),
    "line_markers": (10000, lambda n: RUNTIME + "void f(){ "
                     + "cudaMemcpyToSymbol(sym, b, n); " * n + "}\n"),
    "markers": (8000, lambda n: _function("cudaMemcpyToSymbol(sym, h, n);\n" * n)),
    "kernels": (2000, lambda n: RUNTIME + "".join(
        f"__global__ void k{i}(float* d) {{ d[threadIdx.x] += {i}; __syncthreads(); }}\n"
        for i in range(n))),
    "launches": (2000, lambda n: RUNTIME + "__global__ void k(float* d) {}\n"
                 + "void f(float* d) {\n" + "k<<<1, 256>>>(d);\n" * n + "}\n"),
    "stream_launches": (1000, lambda n: RUNTIME + "__global__ void k(float* d) {}\n"
                        + "void f(float* d, cudaStream_t s) {\n"
                        + "k<<<1, 256, 0, s>>>(d);\ncudaMemcpy(d, d, 4, cudaMemcpyDeviceToDevice);\n"
                        * n + "}\n"),
    "nested_braces": (4000, lambda n: "void f() " + "{ " * n + "cudaDeviceSynchronize();"
                      + " }" * n + "\n"),
    "nested_if": (4000, lambda n: RUNTIME + "#if 1\n" * n + "void f() { cudaDeviceSynchronize(); }\n"
                  + "#endif\n" * n),
    "shared_tiles": (1000, lambda n: _kernel("".join(
        f"__shared__ float t{i}[32][32];\nt{i}[threadIdx.y][threadIdx.x] = d[{i}];\n"
        for i in range(n)))),
    "half_atomics": (2000, lambda n: "#include <cuda_fp16.h>\n"
                     "__global__ void k(__half* h, __half v) {\n"
                     + "atomicAdd(&h[threadIdx.x], v);\n" * n + "}\n"),
    "float_atomics": (2000, lambda n: _kernel("atomicAdd(&d[threadIdx.x], 1.0f);\n" * n)),
    "warp_math": (2000, lambda n: _kernel(
        "int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;\n"
        "unsigned m = __ballot_sync(0xffffffff, lane < 16);\n" * n)),
    "long_comment": (1_000_000, lambda n: "/* " + "cudaMalloc cudaFree " * (n // 20) + "*/\n"),
    "line_comments": (20000, lambda n: "// cudaMalloc(&p, n); cudaFree(p);\n" * n),
    "string_literals": (20000, lambda n: RUNTIME + "const char* s[] = {\n"
                        + '"cudaMalloc failed: \\"x\\"",\n' * n + "};\n"),
    "includes": (4000, lambda n: "".join(f'#include "h{i}.cuh"\n' for i in range(n))
                 + RUNTIME + "void f() { cudaDeviceSynchronize(); }\n"),
    "copy_loops": (1000, lambda n: _function(
        "for (int i = 0; i < 4; ++i) cudaMemcpy(d + i, h + i, n, cudaMemcpyHostToDevice);\n" * n)),
    "copies_in_loop": (2000, lambda n: _function(
        "for (int i = 0; i < 4; ++i) {\n"
        + "cudaMemcpy(d + i, h + i, n, cudaMemcpyHostToDevice);\n" * n + "}\n")),
    "host_buffers": (500, lambda n: _function("".join(
        f"float* h{i} = (float*)malloc(n);\n"
        f"for (int i = 0; i < 4; ++i) cudaMemcpy(d, h{i}, n, cudaMemcpyHostToDevice);\n"
        f"free(h{i});\n" for i in range(n)))),
    "syncs": (2000, lambda n: _function(
        "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, 0);\ncudaDeviceSynchronize();\n" * n)),
    "unclosed_calls": (4000, lambda n: _function("__shfl_down_sync(" * n + "\n")),
    "long_statement": (20000, lambda n: _function("float x = " + "d[threadIdx.x] + " * n + "0;\n")),
}


class _MeteredPattern:
    """A compiled pattern that adds to ``_Meter.scanned`` the bytes each of its scans covers:
    from where it starts to the end of what it returns (the last match finditer yields), or to
    the end of the range when a search finds nothing; a match that fails adds nothing (what it
    tried is not known), findall, sub, subn and split their whole input."""

    __slots__ = ("compiled",)

    def __init__(self, compiled: re.Pattern) -> None:
        self.compiled = compiled

    def __getattr__(self, name: str):
        return getattr(self.compiled, name)

    @staticmethod
    def _covered(string, start: int, end: int | None, endpos: int = sys.maxsize) -> None:
        length = len(string)
        start = min(max(start, 0), length)
        _Meter.scanned += max(0, (min(endpos, length) if end is None else end) - start)

    def search(self, string, pos: int = 0, endpos: int = sys.maxsize):
        found = self.compiled.search(string, pos, endpos)
        self._covered(string, pos, found and found.end(), endpos)
        return found

    def match(self, string, pos: int = 0, endpos: int = sys.maxsize):
        found = self.compiled.match(string, pos, endpos)
        self._covered(string, pos, found.end() if found else pos)
        return found

    def fullmatch(self, string, pos: int = 0, endpos: int = sys.maxsize):
        found = self.compiled.fullmatch(string, pos, endpos)
        self._covered(string, pos, found.end() if found else pos)
        return found

    def finditer(self, string, pos: int = 0, endpos: int = sys.maxsize):
        last = pos
        for found in self.compiled.finditer(string, pos, endpos):
            self._covered(string, last, max(last, found.end()))
            last = max(last, found.end())
            yield found
        self._covered(string, last, None, endpos)

    def findall(self, string, pos: int = 0, endpos: int = sys.maxsize):
        self._covered(string, pos, None, endpos)
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl, string, count: int = 0):
        self._covered(string, 0, None)
        return self.compiled.sub(repl, string, count)

    def subn(self, repl, string, count: int = 0):
        self._covered(string, 0, None)
        return self.compiled.subn(repl, string, count)

    def split(self, string, maxsplit: int = 0):
        self._covered(string, 0, None)
        return self.compiled.split(string, maxsplit)


class _Meter:
    """Work a conversion does, counted instead of timed (the same on any machine and load):

    * ``calls``: Python calls, built-ins included (cProfile's counts), less those made inside
      ``re``: how often it compiles depends on what its cache of 512 patterns holds;
    * ``scanned``: the bytes the converter's regexes scan (see _MeteredPattern): it grows with
      a search repeated over the same text, one call per finding though it is.

    Installed before the converter is imported (its patterns are compiled at import): every
    pattern that code in ``migrator`` or ``rules`` compiles, ``re.sub`` and the like included,
    is metered. Work done by ``bytes.find``, slicing or decoding is in neither count."""

    scanned = 0

    def __init__(self) -> None:
        compile_pattern = re._compile
        re_folder = str(Path(re.__file__).parent)
        self._inside_re = lambda code: code[0].startswith(re_folder)

        def metered_compile(pattern, flags):
            if isinstance(pattern, _MeteredPattern):
                pattern = pattern.compiled
            compiled = compile_pattern(pattern, flags)
            caller = sys._getframe(2).f_globals.get("__name__", "")  # below re.compile, re.sub...
            return _MeteredPattern(compiled) if caller.partition(".")[0] in ("migrator", "rules") \
                else compiled

        re._compile = metered_compile

    def count(self, convert) -> tuple[dict[str, int], object]:
        """({"calls": ..., "scanned": ...}, what ``convert()`` returned)."""
        _Meter.scanned = 0
        profile = cProfile.Profile(builtins=True)
        result = profile.runcall(convert)
        profile.create_stats()
        calls = 0
        for _, count, _, _, callers in profile.stats.values():
            calls += sum(made[0] for caller, made in callers.items()
                         if not self._inside_re(caller)) if callers else count
        return {"calls": calls, "scanned": _Meter.scanned}, result


def _timed(convert, repeat: int) -> tuple[dict[str, float], object]:
    """({"seconds": the fastest of ``repeat`` runs of ``convert()``}, what it returned)."""
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = convert()
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return {"seconds": best}, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="*", help=f"shapes to run (default: all): {', '.join(SHAPES)}")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size N by this")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the fastest counts")
    parser.add_argument("--give-up", type=float, default=10.0, metavar="SECONDS",
                        help="skip size 2N when size N took longer than this (it fails anyway)")
    parser.add_argument("--count", action="store_true",
                        help="count calls and bytes scanned instead of timing (deterministic)")
    parser.add_argument("--json", action="store_true", help="print one JSON record per shape")
    args = parser.parse_args()
    unknown = [name for name in args.shapes if name not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes: {', '.join(unknown)}")
    meter = _Meter() if args.count else None  # before the converter's patterns are compiled

    from migrator import apitables
    from migrator.convert import convert_bytes, rules_for
    from migrator.settings import Settings

    settings = Settings()
    apitables.load()  # the tables' first load and the rule classes are not per-file cost
    rules_for(settings)
    convert_bytes("warm.cu", SHAPES["stream_work"][1](2).encode(), settings)  # lazy set-up too
    kinds = ("calls", "scanned") if meter else ("seconds",)

    def measure(data: bytes) -> tuple[dict, object]:
        convert = functools.partial(convert_bytes, "hard.cu", data, settings)
        return meter.count(convert) if meter else _timed(convert, args.repeat)

    if not args.json:
        columns = "".join(f" {kind + ' at N':>14} {'at 2N':>10} {'ratio':>6}" for kind in kinds)
        print(f"{'shape':18} {'N':>7} {'bytes':>9}{columns}  verdict")
    failed = 0
    for name in args.shapes or SHAPES:
        size, make = SHAPES[name]
        size = max(1, int(size * args.scale))
        small = make(size).encode()
        figures, result = measure(small)
        record = {"shape": name, "size": size, "bytes": len(small), "status": result.status,
                  "message": result.message, **{kind: [figures[kind]] for kind in kinds}}
        if args.count or figures["seconds"] <= args.give_up:
            figures, _ = measure(make(2 * size).encode())
            for kind in kinds:
                record[kind].append(figures[kind])
        record["passed"] = _passed(record, kinds)
        failed += not record["passed"]
        print(json.dumps(record) if args.json else _row(record, kinds), flush=True)
    return 1 if failed else 0


def _passed(record: dict, kinds: tuple[str, ...]) -> bool:
    """Every figure grew at most MAX_RATIO times from N to 2N; seconds also at most MAX_SECONDS
    at N (the ratio is not judged under TOO_FAST_TO_TELL at 2N)."""
    if len(record[kinds[0]]) < 2:
        return False
    if kinds == ("seconds",):
        small, large = record["seconds"]
        return small <= MAX_SECONDS and (large / max(small, 1e-6) <= MAX_RATIO
                                         or large <= TOO_FAST_TO_TELL)
    return all(large <= MAX_RATIO * small for small, large in (record[kind] for kind in kinds))


def _row(record: dict, kinds: tuple[str, ...]) -> str:
    cells = ""
    for kind in kinds:
        figures = record[kind]
        if len(figures) < 2:
            cells += f" {figures[0]:14.3f} {'-':>10} {'-':>6}"
            continue
        small, large = figures
        shown = (lambda x: f"{x:.3f}") if kind == "seconds" else str
        cells += f" {shown(small):>14} {shown(large):>10} {large / max(small, 1e-6):6.2f}"
    verdict = "PASS" if record["passed"] else "FAIL" if len(record[kinds[0]]) == 2 else \
        "FAIL (2N skipped)"
    status = record["status"]
    note = "" if status in ("converted", "unchanged") else f" ({status}: {record['message']})"
    return f"{record['shape']:18} {record['size']:7} {record['bytes']:9}{cells}  {verdict}{note}"


if __name__ == "__main__":
    sys.exit(main())
