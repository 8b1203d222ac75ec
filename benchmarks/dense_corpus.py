"""A dense CUDA corpus for the conversion benchmark: API-heavy host and kernel files.

Runtime-wrapper, benchmark and test-driver code names a CUDA API every two or three lines
(allocations, copies, events, streams, error checks around each call, launches, warp
intrinsics and atomics in the kernels). Such a tree costs a converter far more per line than
mostly-C++ code, so ``convert_bench.py --corpus dense`` measures it separately.

The files are built from the statement tables below: each template is a line (or a few) with
``{a}``/``{b}``/``{h}``/``{n}``/``{s}``/``{e}``/``{k}`` placeholders filled from the file's own names.
Deterministic for a given seed.
"""

from __future__ import annotations

import random
from pathlib import Path

# host statements inside a wrapper function: (template, weight)
HOST_STATEMENTS = (
    ("CHECK(cudaMalloc(&{a}, {n} * sizeof(float)));", 4),
    ("CHECK(cudaMemcpy({a}, {h}, {n} * sizeof(float), cudaMemcpyHostToDevice));", 4),
    ("CHECK(cudaMemcpy({h}, {a}, {n} * sizeof(float), cudaMemcpyDeviceToHost));", 3),
    ("CHECK(cudaMemcpyAsync({a}, {b}, {n} * sizeof(float), cudaMemcpyDeviceToDevice, {s}));", 3),
    ("CHECK(cudaMemset({a}, 0, {n} * sizeof(float)));", 2),
    ("CHECK(cudaMemsetAsync({b}, 0, {n} * sizeof(float), {s}));", 2),
    ("CHECK(cudaEventRecord({e}, {s}));", 3),
    ("CHECK(cudaEventSynchronize({e}));", 2),
    ("CHECK(cudaStreamSynchronize({s}));", 3),
    ("CHECK(cudaStreamWaitEvent({s}, {e}, 0));", 1),
    ("CHECK(cudaDeviceSynchronize());", 2),
    ("CHECK(cudaGetLastError());", 3),
    ("{k}<<<({n} + 255) / 256, 256, 0, {s}>>>({a}, {b}, {n});", 4),
    ("{k}<<<dim3(({n} + 15) / 16, 4), dim3(16, 4)>>>({a}, {b}, {n});", 2),
    ("cudaError_t err_{i} = cudaPeekAtLastError();", 1),
    ("if (err_{i} != cudaSuccess) {{ fprintf(stderr, \"%s\\n\", cudaGetErrorString(err_{i})); "
     "return; }}", 1),
    ("int dev_{i} = 0; CHECK(cudaGetDevice(&dev_{i}));", 1),
    ("cudaDeviceProp prop_{i}; CHECK(cudaGetDeviceProperties(&prop_{i}, 0));", 1),
    ("size_t free_{i}, total_{i}; CHECK(cudaMemGetInfo(&free_{i}, &total_{i}));", 1),
    ("CHECK(cudaFuncSetCacheConfig({k}, cudaFuncCachePreferShared));", 1),
    ("CHECK(cudaMemPrefetchAsync({a}, {n} * sizeof(float), 0, {s}));", 1),
    ("for (int r = 0; r < 4; ++r) {k}<<<64, 256, 0, {s}>>>({a}, {b}, {n});", 2),
    ("total += {n};", 2),
    ("if (total > (size_t){n} * 64) total = 0;  // keep the counter bounded", 2),
    ("std::vector<float> scratch_{i}({n}, 0.0f);", 1),
    ("", 3),
)

# statements in a kernel body
KERNEL_STATEMENTS = (
    ("float v{i} = in[i] * {c}f;", 3),
    ("v += __shfl_down_sync(0xffffffff, v, {w});", 3),
    ("v = __shfl_xor_sync(0xffffffff, v, {w});", 2),
    ("unsigned m{i} = __ballot_sync(0xffffffff, v > 0.0f);", 2),
    ("if (threadIdx.x % 32 == 0) atomicAdd(&out[blockIdx.x], v);", 3),
    ("tile[threadIdx.y][threadIdx.x] = in[i];", 2),
    ("__syncthreads();", 3),
    ("v = __expf(v) + __fdividef(v, 3.0f);", 2),
    ("v = fmaxf(v, __ldg(&in[i]));", 2),
    ("int lane{i} = threadIdx.x & 31;", 1),
    ("out[i] = v + tile[threadIdx.x][threadIdx.y];", 2),
    ("atomicMax(&flags[blockIdx.x], __float_as_int(v));", 1),
)

HEADER = """\
// {rel}: generated dense CUDA benchmark file ({kind})
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
{extra}
#define CHECK(call) do {{ cudaError_t e_ = (call); if (e_ != cudaSuccess) {{ \\
  fprintf(stderr, "CUDA error %s at %s:%d\\n", cudaGetErrorString(e_), __FILE__, __LINE__); \\
  exit(1); }} }} while (0)
"""

EXTRA_INCLUDES = ("", "#include <cuda_fp16.h>", "#include <cublas_v2.h>",
                  "#include <curand_kernel.h>", "#include <cooperative_groups.h>")


def _pick(rng: random.Random, table):
    templates, weights = zip(*table)
    return rng.choices(templates, weights=weights, k=1)[0]


def _kernel(rng: random.Random, name: str, statements: int) -> list[str]:
    lines = [f"__global__ void {name}(float* out, const float* in, int n) {{",
             "  __shared__ float tile[32][33];",
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
             "  if (i >= n) return;",
             "  float v = in[i];",
             "  int flags[1];"]
    for index in range(statements):
        text = _pick(rng, KERNEL_STATEMENTS)
        lines.append("  " + text.format(i=index, c=rng.randint(2, 9), w=rng.choice((1, 2, 4, 8, 16))))
    lines.append("  out[i] = v;")
    lines.append("}")
    return lines


def _wrapper(rng: random.Random, name: str, kernels: list[str], statements: int) -> list[str]:
    lines = [f"void {name}(float* h_x, float* h_y, int n) {{",
             "  float *d_x = nullptr, *d_y = nullptr;",
             "  cudaStream_t stream;",
             "  CHECK(cudaStreamCreate(&stream));",
             "  cudaEvent_t start, stop;",
             "  CHECK(cudaEventCreate(&start));",
             "  CHECK(cudaEventCreate(&stop));",
             "  size_t total = 0;"]
    buffers = ("d_x", "d_y")
    for index in range(statements):
        a, b = rng.sample(buffers, 2)
        text = _pick(rng, HOST_STATEMENTS).format(
            a=a, b=b, h=rng.choice(("h_x", "h_y")), n="n", s=rng.choice(("stream", "0")), e=rng.choice(("start", "stop")),
            k=rng.choice(kernels), i=index)
        lines.append("  " + text if text else "")
    lines += ["  float ms = 0.0f;",
              "  CHECK(cudaEventElapsedTime(&ms, start, stop));",
              "  printf(\"%s: %.3f ms, %zu elements\\n\", __func__, ms, total);",
              "  CHECK(cudaEventDestroy(start));",
              "  CHECK(cudaEventDestroy(stop));",
              "  CHECK(cudaStreamDestroy(stream));",
              "  CHECK(cudaFree(d_x));",
              "  CHECK(cudaFree(d_y));",
              "}"]
    return lines


def build_file(rng: random.Random, rel: str, target_lines: int) -> str:
    kind = rel.rsplit(".", 1)[1]
    stem = Path(rel).stem
    lines = HEADER.format(rel=rel, kind=kind, extra=rng.choice(EXTRA_INCLUDES)).splitlines()
    lines.append("")
    kernels: list[str] = []
    index = 0
    while len(lines) < target_lines:
        index += 1
        if kind != "cpp" and (not kernels or rng.random() < 0.4):
            name = f"{stem}_k{index}"
            lines += _kernel(rng, name, rng.randint(6, 18))
            kernels.append(name)
        else:
            if not kernels:  # a .cpp driver launches kernels declared elsewhere
                kernels.append(f"{stem}_external")
                lines.append(f"__global__ void {stem}_external(float*, const float*, int);")
            lines += _wrapper(rng, f"{stem}_run{index}", kernels, rng.randint(12, 40))
        lines.append("")
    return "\n".join(lines) + "\n"


def generate_dense_corpus(root: Path, total_lines: int, seed: int = 20261201) -> dict:
    """Write the dense tree under ``root``; returns the same counts as the mixed generator."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    written = 0
    index = 0
    by_ext: dict[str, int] = {}
    folders: set[str] = set()
    size = 0
    while written < total_lines:
        index += 1
        ext = rng.choices(("cu", "cuh", "cpp"), weights=(70, 10, 20), k=1)[0]
        folder = rng.choice(("bench", "bench/blas", "wrappers", "wrappers/streams", "tests",
                             "tests/unit", "drivers"))
        rel = f"{folder}/dense_{index:04d}.{ext}"
        text = build_file(random.Random(rng.getrandbits(64)), rel, rng.randint(200, 700))
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += text.count("\n")
        size += len(text)
        by_ext["." + ext] = by_ext.get("." + ext, 0) + 1
        folders.add(folder)
    return {"files": index, "lines": written, "bytes": size, "by_ext": dict(sorted(by_ext.items())),
            "folders": len(folders)}
