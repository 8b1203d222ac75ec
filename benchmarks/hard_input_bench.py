"""Per-file cost on hard input: does converting one file stay near-linear in its size?

Each shape below writes a file that stresses one scan of the converter (unclosed literals, one
huge logical line, thousands of findings in one function...). The script converts every shape
at size N and 2N, in this process (``convert_bytes``, what a worker runs per file: interpreter
start-up and the rule tables' first load are left out), and prints the seconds, their ratio
and a verdict: PASS when the file at N (the size issue 10 reported, or one of that order)
converts in at most 1 s and doubling the size at most 2.6x the time (linear work gives about
2; quadratic work gives about 4; under 0.1 s at 2N the ratio is not judged).

    .venv/bin/python benchmarks/hard_input_bench.py               # every shape
    .venv/bin/python benchmarks/hard_input_bench.py raw streams   # some shapes
    .venv/bin/python benchmarks/hard_input_bench.py --scale 0.25  # smaller sizes, quicker

The timings are wall clock, the best of ``--repeat`` runs: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator import apitables  # noqa: E402
from migrator.convert import convert_bytes, rules_for  # noqa: E402
from migrator.settings import Settings  # noqa: E402

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


def _timed(data: bytes, settings: Settings, repeat: int) -> tuple[float, str]:
    best = None
    status = ""
    for _ in range(repeat):
        started = time.perf_counter()
        result = convert_bytes("hard.cu", data, settings)
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
        status = result.status if result.status != "failed" else f"failed: {result.error}"
    return best, status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="*", help=f"shapes to run (default: all): {', '.join(SHAPES)}")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size N by this")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the fastest counts")
    parser.add_argument("--give-up", type=float, default=10.0, metavar="SECONDS",
                        help="skip size 2N when size N took longer than this (it fails anyway)")
    args = parser.parse_args()
    unknown = [name for name in args.shapes if name not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes: {', '.join(unknown)}")
    settings = Settings()
    apitables.load()  # the tables' first load and the rule classes are not per-file cost
    rules_for(settings)
    failed = 0
    print(f"{'shape':16} {'N':>8} {'bytes':>9} {'s at N':>8} {'s at 2N':>8} {'ratio':>6}  verdict")
    for name in args.shapes or SHAPES:
        size, make = SHAPES[name]
        size = max(1, int(size * args.scale))
        small = make(size).encode()
        large = make(2 * size).encode()
        seconds_small, status = _timed(small, settings, args.repeat)
        if seconds_small > args.give_up:
            failed += 1
            print(f"{name:16} {size:8} {len(small):9} {seconds_small:8.3f} {'-':>8} {'-':>6}  "
                  "FAIL (2N skipped)", flush=True)
            continue
        seconds_large, _ = _timed(large, settings, args.repeat)
        ratio = seconds_large / max(seconds_small, 1e-6)
        passed = seconds_small <= MAX_SECONDS and (ratio <= MAX_RATIO
                                                   or seconds_large <= TOO_FAST_TO_TELL)
        failed += not passed
        note = "" if status in ("converted", "unchanged") else f" ({status})"
        print(f"{name:16} {size:8} {len(small):9} {seconds_small:8.3f} {seconds_large:8.3f} "
              f"{ratio:6.2f}  {'PASS' if passed else 'FAIL'}{note}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
