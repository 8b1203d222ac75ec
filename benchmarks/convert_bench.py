#!/usr/bin/env python3
"""End-to-end conversion benchmark: rocmigrate vs PyTorch's hipify on a generated CUDA project.

Not a test. It:

1. generates a deterministic CUDA project (default 200,000 lines, counted as newlines) of a few
   hundred .cu/.cuh/.h/.cpp files in nested folders, from templates with varied identifiers and
   sizes: host code with error-checking macros around the runtime API, cuBLAS/cuRAND in some
   files, kernels (shared memory, atomics, warp shuffles, templates, <<<>>> launches) and, for
   most of its lines, plain C++ (classes, loops, math, parsing), comments, literals, #if blocks;
2. copies it twice and times, in one run:
   - ``rocmigrate convert COPY1 -o OUT1`` (a subprocess; wall clock incl. interpreter start-up),
     with the default jobs and again with ``--jobs 1`` into a fresh output;
   - ``torch.utils.hipify.hipify_python.hipify`` over COPY2 in a subprocess of a Python that has
     torch 2.13.0 (wall clock incl. ``import torch``, and the call alone);
   - an unchanged re-run of rocmigrate on OUT1 (its content-hash cache), as % of the full run
     (text summary, as the full run; once more with ``--format json``, reported only);
   - a re-run after editing one source file, checking that exactly one file was re-converted;
3. prints throughput, the ratio, the targets, output-coverage and a few sanity counts.

Usage: python benchmarks/convert_bench.py [--lines 200000] [--workdir DIR]
                                          [--torch-python PATH] [--rocmigrate CMD]

Only the standard library is used here; torch runs in its own interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

TORCH_VERSION = "2.13.0"
DEFAULT_TORCH_VENV = Path.home() / ".cache" / "rocmigrate-bench" / "torch-venv"
TARGET_RATIO = 2.0  # rocmigrate >= 2x torch end-to-end throughput
TARGET_RERUN_PCT = 5.0  # unchanged re-run < 5% of a full run
PROJECT = "nova"  # the generated project's namespace / include prefix

# --------------------------------------------------------------------------------------------
# Corpus generation
# --------------------------------------------------------------------------------------------

WORDS = (
    "scale bias gelu relu silu softmax norm layer rms attn rope embed gather scatter pool conv "
    "stencil jacobi spmv csr bucket hist prefix radix topk argmax dot axpy gemv saxpy lerp clip "
    "quant dequant pack unpack mask dropout adam sgd momentum ema loss grad fused cast fill "
    "transpose reduce mean var sum count hash bloom sort merge tile residual blend resample "
    "filter window frame voxel ray particle force density pressure field mesh edge vertex "
    "weight gate expert route token logit prob score rank cluster center distance kernel"
).split()
NOUNS = (
    "Buffer Plan Config Stats Table Grid Solver Workspace Context Tracker Histogram Matrix "
    "Tensor View Layout Schedule Queue Pool Cache Profile Report Options Descriptor Shape "
    "Partition Segment Window Model Stage Batch Frame Sampler Filter Index Map Range"
).split()
FOLDERS = (
    "src/core", "src/core/memory", "src/core/runtime", "src/kernels/elementwise",
    "src/kernels/reduce", "src/kernels/linalg", "src/kernels/sparse", "src/kernels/conv",
    "src/kernels/attention", "src/kernels/random", "src/io", "src/io/formats", "src/solvers",
    "src/solvers/iterative", "src/physics", "src/physics/particles", "src/ml/layers",
    "src/ml/optim", "src/ml/loss", "src/util", "src/util/strings", "include/nova",
    "include/nova/detail", "include/nova/kernels", "tools", "tools/bench", "tests/unit",
    "tests/integration", "examples", "examples/advanced",
)
FLOAT_TYPES = ("float", "double")
MATH_F = ("expf", "tanhf", "sqrtf", "logf", "fabsf", "sinf", "cosf", "rsqrtf")
BLOCKS = (64, 128, 256, 512)
TILES = (8, 16, 32)


class Gen:
    """Per-file generator state: a seeded RNG and unique identifiers."""

    def __init__(self, rng: random.Random, kind: str, rel: str, headers: list[str]) -> None:
        self.r = rng
        self.kind = kind  # cu / cuh / h / cpp
        self.rel = rel
        self.headers = headers  # generated project headers available for #include
        self.used: set[str] = set()
        self.kernels: list[tuple[str, bool]] = []  # (name, templated) elementwise kernels
        self.reducers: list[str] = []
        self.kernels2d: list[tuple[str, str]] = []  # (name, element type) 2-D kernels

    def name(self, parts: int = 2, suffix: str = "") -> str:
        for _ in range(100):
            base = "_".join(self.r.choice(WORDS) for _ in range(parts)) + suffix
            if base not in self.used:
                self.used.add(base)
                return base
        base = f"{base}_{len(self.used)}"
        self.used.add(base)
        return base

    def cls(self) -> str:
        for _ in range(100):
            base = self.r.choice(WORDS).capitalize() + self.r.choice(NOUNS)
            if base not in self.used:
                self.used.add(base)
                return base
        base = f"{base}{len(self.used)}"
        self.used.add(base)
        return base

    def pick(self, seq):
        return self.r.choice(seq)

    def num(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)


# ---- file-level pieces -----------------------------------------------------------------------

def license_block(g: Gen) -> list[str]:
    year = g.num(2016, 2024)
    what = g.pick([
        "GPU kernels and their host launchers", "host-side orchestration for device work",
        "helpers shared by the solver and layer code", "reference CPU implementations used by "
        "the tests", "device memory management", "batched linear algebra on the GPU",
    ])
    lines = [
        f"// Copyright (c) {year}-2025 The Nova Authors. All rights reserved.",
        "// SPDX-License-Identifier: Apache-2.0",
        "//",
        f"// {Path(g.rel).name}: {what}.",
    ]
    if g.r.random() < 0.5:
        lines += [
            "//",
            "// Every runtime call is wrapped in NOVA_CUDA_CHECK, which reports the failing",
            "// call with cudaGetErrorString and aborts; kernels are checked with",
            "// cudaGetLastError right after their launch.",
        ]
    return lines + [""]


def includes(g: Gen) -> list[str]:
    out: list[str] = []
    if g.kind in ("cu", "cuh"):
        out.append("#include <cuda_runtime.h>")
        if g.r.random() < 0.3:
            out.append("#include <cuda_fp16.h>")
        if g.r.random() < 0.2:
            out.append("#include <cooperative_groups.h>")
    elif g.kind == "cpp" and g.r.random() < 0.45:
        out.append("#include <cuda_runtime_api.h>" if g.r.random() < 0.3
                   else "#include <cuda_runtime.h>")
    elif g.kind == "h" and g.r.random() < 0.4:
        out.append("#include <cuda_runtime.h>")
    std = ["<cstdio>", "<cstdlib>", "<cstdint>", "<cmath>", "<vector>", "<string>",
           "<algorithm>", "<memory>", "<stdexcept>", "<sstream>", "<map>", "<numeric>",
           "<utility>", "<array>", "<functional>", "<limits>", "<chrono>"]
    if out:
        out.append("")
    out += [f"#include {h}" for h in sorted(g.r.sample(std, g.num(3, 8)))]
    local = [h for h in g.headers if h != g.rel]
    if local:
        out.append("")
        for h in sorted(g.r.sample(local, min(len(local), g.num(1, 3)))):
            out.append(f'#include "{h[len("include/"):] if h.startswith("include/") else h}"')
    return out + [""]


CHECK_HEADER = """\
// Copyright (c) 2019-2025 The Nova Authors. All rights reserved.
// SPDX-License-Identifier: Apache-2.0
//
// Error-checking macros for the CUDA runtime, cuBLAS and cuRAND. Each evaluates the call once,
// and on failure prints the call, the file and line and a readable message, then aborts.
#pragma once

#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <curand.h>

#include <cstdio>
#include <cstdlib>

#define NOVA_CUDA_CHECK(call)                                                   \\
  do {                                                                          \\
    cudaError_t nova_err_ = (call);                                             \\
    if (nova_err_ != cudaSuccess) {                                             \\
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\\n", #call, __FILE__,     \\
                   __LINE__, cudaGetErrorString(nova_err_));                    \\
      std::abort();                                                             \\
    }                                                                           \\
  } while (0)

#define NOVA_CUBLAS_CHECK(call)                                                 \\
  do {                                                                          \\
    cublasStatus_t nova_st_ = (call);                                           \\
    if (nova_st_ != CUBLAS_STATUS_SUCCESS) {                                    \\
      std::fprintf(stderr, "cuBLAS error %d at %s:%d\\n", (int)nova_st_,        \\
                   __FILE__, __LINE__);                                         \\
      std::abort();                                                             \\
    }                                                                           \\
  } while (0)

#define NOVA_CURAND_CHECK(call)                                                 \\
  do {                                                                          \\
    curandStatus_t nova_rs_ = (call);                                           \\
    if (nova_rs_ != CURAND_STATUS_SUCCESS) {                                    \\
      std::fprintf(stderr, "cuRAND error %d at %s:%d\\n", (int)nova_rs_,        \\
                   __FILE__, __LINE__);                                         \\
      std::abort();                                                             \\
    }                                                                           \\
  } while (0)

// Checks the last kernel launch (cudaGetLastError) and, in debug builds, waits for it.
#ifdef NOVA_DEBUG_SYNC
#define NOVA_CHECK_LAUNCH()                                                     \\
  do {                                                                          \\
    NOVA_CUDA_CHECK(cudaGetLastError());                                        \\
    NOVA_CUDA_CHECK(cudaDeviceSynchronize());                                   \\
  } while (0)
#else
#define NOVA_CHECK_LAUNCH() NOVA_CUDA_CHECK(cudaGetLastError())
#endif

namespace nova {

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

inline int device_count() {
  int count = 0;
  NOVA_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

}  // namespace nova
"""


def local_check_macro(g: Gen) -> list[str]:
    name = g.pick(["CHECK", "CUDA_CHECK", "CK", "CHECK_CUDA"])
    g.check = name
    return [
        f"#define {name}(call)                                                     \\",
        "  do {                                                                    \\",
        "    cudaError_t err_ = (call);                                            \\",
        "    if (err_ != cudaSuccess) {                                            \\",
        '      fprintf(stderr, "%s failed at %s:%d: %s\\n", #call, __FILE__,         \\',
        "              __LINE__, cudaGetErrorString(err_));                         \\",
        "      exit(EXIT_FAILURE);                                                 \\",
        "    }                                                                     \\",
        "  } while (0)",
        "",
    ]


# ---- device code -----------------------------------------------------------------------------

def sec_elementwise_kernel(g: Gen) -> list[str]:
    name = g.name(suffix="_kernel")
    templ = g.r.random() < 0.6
    t = "T" if templ else g.pick(FLOAT_TYPES)
    op = g.pick([
        "v * alpha + beta", "v > T(0) ? v : v * alpha", "v * (T(1) / (T(1) + exp(-v)))",
        "alpha * v * v + beta * v", "min(max(v, -alpha), alpha)", "(v - beta) * alpha",
    ])
    if not templ:
        op = op.replace("T(", f"{t}(")
    g.kernels.append((name, templ))
    lines = []
    if g.r.random() < 0.6:
        lines.append(f"// {name}: out[i] = f(in[i]) over a grid-stride loop.")
    if templ:
        lines.append("template <typename T>")
    lines += [
        f"__global__ void {name}(const {t}* __restrict__ in, {t}* __restrict__ out, int n,",
        f"{' ' * (17 + len(name))}{t} alpha, {t} beta) {{",
        "  const int stride = blockDim.x * gridDim.x;",
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {",
        f"    const {t} v = in[i];",
        f"    out[i] = {op};",
        "  }",
        "}",
        "",
    ]
    return lines


def sec_warp_helpers(g: Gen) -> list[str]:
    name = g.name(suffix="_warp")
    g.reducers.append(name)
    use_xor = g.r.random() < 0.4
    shfl = ("__shfl_xor_sync(0xffffffff, v, offset)" if use_xor
            else "__shfl_down_sync(0xffffffff, v, offset)")
    op = g.pick(["v += {s};", "v = max(v, {s});", "v = min(v, {s});"])
    return [
        "// Warp-level reduction: assumes 32 lanes and a full mask.",
        "template <typename T>",
        f"__device__ __forceinline__ T {name}(T v) {{",
        "#pragma unroll",
        "  for (int offset = 16; offset > 0; offset >>= 1) {",
        "    " + op.format(s=shfl),
        "  }",
        "  return v;",
        "}",
        "",
    ]


def sec_reduction_kernel(g: Gen) -> list[str]:
    block = g.pick(BLOCKS)
    name = g.name(suffix="_reduce")
    t = g.pick(("float", "int", "unsigned int"))
    warp = g.reducers[-1] if g.reducers and g.r.random() < 0.7 else None
    lines = [
        f"// Block-wide sum of {t} values; lane 0 of warp 0 adds the block's sum to *result.",
        f"__global__ void {name}(const {t}* in, {t}* result, int n) {{",
        f"  __shared__ {t} partial[{block}];",
        "  const int tid = threadIdx.x;",
        f"  {t} acc = 0;",
        "  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {",
        "    acc += in[i];",
        "  }",
        "  partial[tid] = acc;",
        "  __syncthreads();",
        "  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {",
        "    if (tid < s) partial[tid] += partial[tid + s];",
        "    __syncthreads();",
        "  }",
        "  if (tid < 32) {",
        f"    {t} v = partial[tid];",
    ]
    if warp:
        lines.append(f"    v = {warp}(v);")
    else:
        lines += [
            "    for (int offset = 16; offset > 0; offset /= 2) {",
            "      v += __shfl_down_sync(0xffffffff, v, offset);",
            "    }",
        ]
    lines += [
        "    if (tid == 0) atomicAdd(result, v);",
        "  }",
        "}",
        "",
    ]
    g.last_reduce = (name, t, block)
    return lines


def sec_transpose_kernel(g: Gen) -> list[str]:
    tile = g.pick(TILES)
    pad = g.pick(["", " + 1"])
    name = g.name(suffix="_transpose")
    t = g.pick(FLOAT_TYPES)
    g.kernels2d.append((name, t))
    return [
        f"#define TILE_{name.upper()} {tile}",
        "",
        f"// Tiled transpose through shared memory ({tile}x{tile} tiles).",
        f"__global__ void {name}(const {t}* in, {t}* out, int rows, int cols) {{",
        f"  __shared__ {t} tile[TILE_{name.upper()}][TILE_{name.upper()}{pad}];",
        f"  int x = blockIdx.x * TILE_{name.upper()} + threadIdx.x;",
        f"  int y = blockIdx.y * TILE_{name.upper()} + threadIdx.y;",
        "  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];",
        "  __syncthreads();",
        f"  x = blockIdx.y * TILE_{name.upper()} + threadIdx.x;",
        f"  y = blockIdx.x * TILE_{name.upper()} + threadIdx.y;",
        "  if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];",
        "}",
        "",
    ]


def sec_matmul_kernel(g: Gen) -> list[str]:
    tile = g.pick((16, 32))
    name = g.name(suffix="_gemm")
    return [
        f"// C = A * B for row-major M x K and K x N matrices, {tile}x{tile} shared tiles.",
        f"template <int TILE = {tile}>",
        f"__global__ void {name}(const float* A, const float* B, float* C, int M, int N, int K) {{",
        "  __shared__ float As[TILE][TILE];",
        "  __shared__ float Bs[TILE][TILE];",
        "  const int row = blockIdx.y * TILE + threadIdx.y;",
        "  const int col = blockIdx.x * TILE + threadIdx.x;",
        "  float acc = 0.0f;",
        "  for (int k0 = 0; k0 < K; k0 += TILE) {",
        "    As[threadIdx.y][threadIdx.x] =",
        "        (row < M && k0 + threadIdx.x < K) ? A[row * K + k0 + threadIdx.x] : 0.0f;",
        "    Bs[threadIdx.y][threadIdx.x] =",
        "        (col < N && k0 + threadIdx.y < K) ? B[(k0 + threadIdx.y) * N + col] : 0.0f;",
        "    __syncthreads();",
        "#pragma unroll",
        "    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];",
        "    __syncthreads();",
        "  }",
        "  if (row < M && col < N) C[row * N + col] = acc;",
        "}",
        "",
    ]


def sec_histogram_kernel(g: Gen) -> list[str]:
    bins = g.pick((64, 128, 256))
    name = g.name(suffix="_histogram")
    return [
        f"// {bins}-bin histogram: per-block counts in shared memory, merged with atomics.",
        f"__global__ void {name}(const unsigned char* data, unsigned int* hist, int n) {{",
        f"  __shared__ unsigned int local[{bins}];",
        f"  for (int b = threadIdx.x; b < {bins}; b += blockDim.x) local[b] = 0;",
        "  __syncthreads();",
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {",
        f"    atomicAdd(&local[data[i] % {bins}], 1u);",
        "  }",
        "  __syncthreads();",
        f"  for (int b = threadIdx.x; b < {bins}; b += blockDim.x) {{",
        "    if (local[b] != 0) atomicAdd(&hist[b], local[b]);",
        "  }",
        "}",
        "",
    ]


def sec_atomic_max_float(g: Gen) -> list[str]:
    name = g.name(suffix="_atomic_max")
    return [
        "// Float atomic max through atomicCAS on the bit pattern.",
        f"__device__ float {name}(float* addr, float value) {{",
        "  int* as_int = reinterpret_cast<int*>(addr);",
        "  int old = *as_int;",
        "  int assumed;",
        "  do {",
        "    assumed = old;",
        "    if (__int_as_float(assumed) >= value) break;",
        "    old = atomicCAS(as_int, assumed, __float_as_int(value));",
        "  } while (assumed != old);",
        "  return __int_as_float(old);",
        "}",
        "",
    ]


def sec_scan_kernel(g: Gen) -> list[str]:
    block = g.pick((128, 256, 512))
    name = g.name(suffix="_scan")
    return [
        f"// Inclusive Hillis-Steele scan of one {block}-element block.",
        f"__global__ void {name}(const int* in, int* out, int* block_sums, int n) {{",
        f"  __shared__ int buf[{block}];",
        "  const int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "  buf[threadIdx.x] = i < n ? in[i] : 0;",
        "  __syncthreads();",
        "  for (int offset = 1; offset < blockDim.x; offset <<= 1) {",
        "    int add = threadIdx.x >= offset ? buf[threadIdx.x - offset] : 0;",
        "    __syncthreads();",
        "    buf[threadIdx.x] += add;",
        "    __syncthreads();",
        "  }",
        "  if (i < n) out[i] = buf[threadIdx.x];",
        "  if (threadIdx.x == blockDim.x - 1 && block_sums != nullptr) {",
        "    block_sums[blockIdx.x] = buf[threadIdx.x];",
        "  }",
        "}",
        "",
    ]


def sec_softmax_kernel(g: Gen) -> list[str]:
    name = g.name(suffix="_softmax")
    return [
        "// Row softmax, one warp per row (rows of at most a few thousand columns).",
        f"__global__ void {name}(const float* x, float* y, int rows, int cols) {{",
        "  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;",
        "  const int lane = threadIdx.x % 32;",
        "  if (warp >= rows) return;",
        "  const float* row = x + (size_t)warp * cols;",
        "  float m = -INFINITY;",
        "  for (int c = lane; c < cols; c += 32) m = fmaxf(m, row[c]);",
        "  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));",
        "  float s = 0.0f;",
        "  for (int c = lane; c < cols; c += 32) s += __expf(row[c] - m);",
        "  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);",
        "  s = __shfl_sync(0xffffffff, s, 0);",
        "  for (int c = lane; c < cols; c += 32) y[(size_t)warp * cols + c] = __expf(row[c] - m) / s;",
        "}",
        "",
    ]


def sec_stencil_kernel(g: Gen) -> list[str]:
    name = g.name(suffix="_stencil")
    w = [round(g.r.uniform(0.05, 0.3), 3) for _ in range(2)]
    g.kernels2d.append((name, "float"))
    return [
        "// 5-point stencil on a 2-D grid; boundary cells are copied through.",
        f"__global__ void {name}(const float* u, float* v, int nx, int ny) {{",
        "  const int x = blockIdx.x * blockDim.x + threadIdx.x;",
        "  const int y = blockIdx.y * blockDim.y + threadIdx.y;",
        "  if (x >= nx || y >= ny) return;",
        "  const int idx = y * nx + x;",
        "  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {",
        "    v[idx] = u[idx];",
        "    return;",
        "  }",
        f"  v[idx] = {1 - 4 * w[0]:.3f}f * u[idx] + {w[0]}f * (u[idx - 1] + u[idx + 1] +",
        f"           u[idx - nx] + u[idx + nx]) + {w[1]}f * __ldg(&u[idx]) * 0.0f;",
        "}",
        "",
    ]


def sec_constant_poly(g: Gen) -> list[str]:
    name = g.name(suffix="_poly")
    n = g.pick((4, 8))
    check = getattr(g, "check", "NOVA_CUDA_CHECK")
    return [
        f"__constant__ float c_{name}[{n}];",
        "",
        f"__global__ void {name}_eval(const float* x, float* y, int n) {{",
        "  const int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "  if (i >= n) return;",
        "  float acc = 0.0f;",
        f"  for (int k = {n - 1}; k >= 0; --k) acc = acc * x[i] + c_{name}[k];",
        "  y[i] = acc;",
        "}",
        "",
        f"void {name}_set(const float* coeffs) {{",
        f"  {check}(cudaMemcpyToSymbol(c_{name}, coeffs, {n} * sizeof(float)));",
        "}",
        "",
    ]


def sec_dynamic_smem_kernel(g: Gen) -> list[str]:
    name = g.name(suffix="_window")
    return [
        "// Sliding-window mean with the window staged in dynamic shared memory.",
        f"__global__ void {name}(const float* in, float* out, int n, int radius) {{",
        "  extern __shared__ float smem[];",
        "  const int base = blockIdx.x * blockDim.x;",
        "  for (int j = threadIdx.x; j < blockDim.x + 2 * radius; j += blockDim.x) {",
        "    const int src = base + j - radius;",
        "    smem[j] = (src >= 0 && src < n) ? in[src] : 0.0f;",
        "  }",
        "  __syncthreads();",
        "  const int i = base + threadIdx.x;",
        "  if (i >= n) return;",
        "  float s = 0.0f;",
        "  for (int k = -radius; k <= radius; ++k) s += smem[threadIdx.x + radius + k];",
        "  out[i] = s / (2 * radius + 1);",
        "}",
        "",
    ]


def sec_fp16_block(g: Gen) -> list[str]:
    name = g.name(suffix="_half")
    return [
        "#if defined(NOVA_ENABLE_FP16)",
        "// Half-precision variant, compiled only when FP16 support is enabled.",
        f"__global__ void {name}(const __half* in, __half* out, int n, float scale) {{",
        "  const int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "  if (i < n) {",
        "    const float v = __half2float(in[i]);",
        "    out[i] = __float2half(v * scale);",
        "  }",
        "}",
        "#else",
        f"// {name}: FP16 disabled; the float path is used instead.",
        "#endif  // NOVA_ENABLE_FP16",
        "",
    ]


def sec_device_helpers(g: Gen) -> list[str]:
    name = g.name()
    f = g.pick(MATH_F)
    return [
        f"__host__ __device__ inline float {name}(float a, float b) {{",
        f"  return {f}(a) * b + (a > b ? a - b : b - a) * 0.5f;",
        "}",
        "",
        f"__device__ inline int {name}_lane() {{ return threadIdx.x & 31; }}",
        "",
    ]


# ---- host code with the runtime API ------------------------------------------------------------

def _chk(g: Gen) -> str:
    return getattr(g, "check", "NOVA_CUDA_CHECK")


def sec_launcher(g: Gen) -> list[str]:
    if not g.kernels:
        return []
    kernel, templ = g.pick(g.kernels)
    c = _chk(g)
    t = g.pick(FLOAT_TYPES) if templ else None
    ty = t or "float"
    fn = g.name(suffix="_run")
    block = g.pick(BLOCKS)
    launch = f"{kernel}<{t}>" if templ else kernel
    with_stream = g.r.random() < 0.5
    args = "d_in, d_out, n, alpha, beta"
    lines = [
        f"// Runs {kernel} on host data; returns the device time in milliseconds.",
        f"float {fn}(const std::vector<{ty}>& host_in, std::vector<{ty}>& host_out, {ty} alpha,",
        f"{' ' * (7 + len(fn))}{ty} beta{', cudaStream_t stream' if with_stream else ''}) {{",
        "  const int n = static_cast<int>(host_in.size());",
        f"  const size_t bytes = n * sizeof({ty});",
        "  host_out.resize(n);",
        f"  {ty}* d_in = nullptr;",
        f"  {ty}* d_out = nullptr;",
        f"  {c}(cudaMalloc(&d_in, bytes));",
        f"  {c}(cudaMalloc(reinterpret_cast<void**>(&d_out), bytes));",
    ]
    if with_stream:
        lines += [
            f"  {c}(cudaMemcpyAsync(d_in, host_in.data(), bytes, cudaMemcpyHostToDevice, stream));",
        ]
    else:
        lines += [f"  {c}(cudaMemcpy(d_in, host_in.data(), bytes, cudaMemcpyHostToDevice));"]
    lines += [
        "  cudaEvent_t start, stop;",
        f"  {c}(cudaEventCreate(&start));",
        f"  {c}(cudaEventCreate(&stop));",
        f"  const int block = {block};",
        "  const int grid = std::min((n + block - 1) / block, 4096);",
        f"  {c}(cudaEventRecord(start{', stream' if with_stream else ''}));",
    ]
    if with_stream:
        lines.append(f"  {launch}<<<grid, block, 0, stream>>>({args});")
    else:
        lines.append(f"  {launch}<<<grid, block>>>({args});")
    lines += [
        f"  {c}(cudaGetLastError());",
        f"  {c}(cudaEventRecord(stop{', stream' if with_stream else ''}));",
        f"  {c}(cudaEventSynchronize(stop));",
        "  float ms = 0.0f;",
        f"  {c}(cudaEventElapsedTime(&ms, start, stop));",
    ]
    if with_stream:
        lines += [
            f"  {c}(cudaMemcpyAsync(host_out.data(), d_out, bytes, cudaMemcpyDeviceToHost, stream));",
            f"  {c}(cudaStreamSynchronize(stream));",
        ]
    else:
        lines += [f"  {c}(cudaMemcpy(host_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));"]
    lines += [
        f"  {c}(cudaEventDestroy(start));",
        f"  {c}(cudaEventDestroy(stop));",
        f"  {c}(cudaFree(d_in));",
        f"  {c}(cudaFree(d_out));",
        "  return ms;",
        "}",
        "",
    ]
    return lines


def sec_reduce_launcher(g: Gen) -> list[str]:
    if not hasattr(g, "last_reduce"):
        return []
    kernel, t, block = g.last_reduce
    del g.last_reduce
    c = _chk(g)
    fn = g.name(suffix="_total")
    return [
        f"{t} {fn}(const {t}* d_in, int n) {{",
        f"  {t}* d_result = nullptr;",
        f"  {c}(cudaMalloc(&d_result, sizeof({t})));",
        f"  {c}(cudaMemset(d_result, 0, sizeof({t})));",
        f"  const int blocks = std::min((n + {block} - 1) / {block}, 1024);",
        f"  {kernel}<<<blocks, {block}>>>(d_in, d_result, n);",
        f"  {c}(cudaGetLastError());",
        f"  {c}(cudaDeviceSynchronize());",
        f"  {t} h_result = 0;",
        f"  {c}(cudaMemcpy(&h_result, d_result, sizeof({t}), cudaMemcpyDeviceToHost));",
        f"  {c}(cudaFree(d_result));",
        "  return h_result;",
        "}",
        "",
    ]


def sec_stream_pipeline(g: Gen) -> list[str]:
    c = _chk(g)
    fn = g.name(suffix="_pipeline")
    nstreams = g.pick((2, 3, 4, 8))
    chunks = nstreams * g.pick((2, 4))
    kernel = g.kernels[-1][0] if g.kernels and not g.kernels[-1][1] else None
    lines = [
        f"// Splits the work into {chunks} chunks over {nstreams} streams so that copies of one",
        "// chunk overlap the kernel of another (needs pinned memory: cudaMallocHost).",
        f"void {fn}(const float* src, float* dst, int n) {{",
        f"  constexpr int kStreams = {nstreams};",
        f"  constexpr int kChunks = {chunks};",
        "  cudaStream_t streams[kStreams];",
        "  for (int s = 0; s < kStreams; ++s) {",
        f"    {c}(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));",
        "  }",
        "  const int chunk = (n + kChunks - 1) / kChunks;",
        "  float* h_pinned = nullptr;",
        "  float* d_buf = nullptr;",
        f"  {c}(cudaMallocHost(&h_pinned, (size_t)n * sizeof(float)));",
        f"  {c}(cudaMalloc(&d_buf, (size_t)n * sizeof(float)));",
        "  std::copy(src, src + n, h_pinned);",
        "  for (int k = 0; k < kChunks; ++k) {",
        "    const int off = k * chunk;",
        "    const int len = std::min(chunk, n - off);",
        "    if (len <= 0) break;",
        "    cudaStream_t s = streams[k % kStreams];",
        f"    {c}(cudaMemcpyAsync(d_buf + off, h_pinned + off, len * sizeof(float),",
        "                        cudaMemcpyHostToDevice, s));",
    ]
    if kernel:
        lines += [
            f"    {kernel}<<<(len + 255) / 256, 256, 0, s>>>(d_buf + off, d_buf + off, len, 1.0f, 0.0f);",
            f"    {c}(cudaGetLastError());",
        ]
    lines += [
        f"    {c}(cudaMemcpyAsync(h_pinned + off, d_buf + off, len * sizeof(float),",
        "                        cudaMemcpyDeviceToHost, s));",
        "  }",
        "  for (int s = 0; s < kStreams; ++s) {",
        f"    {c}(cudaStreamSynchronize(streams[s]));",
        f"    {c}(cudaStreamDestroy(streams[s]));",
        "  }",
        "  std::copy(h_pinned, h_pinned + n, dst);",
        f"  {c}(cudaFreeHost(h_pinned));",
        f"  {c}(cudaFree(d_buf));",
        "}",
        "",
    ]
    return lines


def sec_event_timer(g: Gen) -> list[str]:
    c = _chk(g)
    cls = g.cls() + "Timer"
    return [
        "// Measures device time between start() and stop() on one stream with CUDA events.",
        f"class {cls} {{",
        " public:",
        f"  explicit {cls}(cudaStream_t stream = 0) : stream_(stream) {{",
        f"    {c}(cudaEventCreate(&begin_));",
        f"    {c}(cudaEventCreateWithFlags(&end_, cudaEventDefault));",
        "  }",
        f"  ~{cls}() {{",
        "    cudaEventDestroy(begin_);",
        "    cudaEventDestroy(end_);",
        "  }",
        f"  {cls}(const {cls}&) = delete;",
        f"  {cls}& operator=(const {cls}&) = delete;",
        "",
        f"  void start() {{ {c}(cudaEventRecord(begin_, stream_)); }}",
        "  float stop() {",
        f"    {c}(cudaEventRecord(end_, stream_));",
        f"    {c}(cudaEventSynchronize(end_));",
        "    float ms = 0.0f;",
        f"    {c}(cudaEventElapsedTime(&ms, begin_, end_));",
        "    total_ms_ += ms;",
        "    ++count_;",
        "    return ms;",
        "  }",
        "  float mean_ms() const { return count_ ? total_ms_ / count_ : 0.0f; }",
        "",
        " private:",
        "  cudaStream_t stream_;",
        "  cudaEvent_t begin_{};",
        "  cudaEvent_t end_{};",
        "  float total_ms_ = 0.0f;",
        "  int count_ = 0;",
        "};",
        "",
    ]


def sec_device_buffer(g: Gen) -> list[str]:
    c = _chk(g)
    cls = g.cls()
    return [
        "// Owns a device allocation of n elements of T (cudaMalloc / cudaFree).",
        "template <typename T>",
        f"class {cls} {{",
        " public:",
        f"  {cls}() = default;",
        f"  explicit {cls}(size_t n) : n_(n) {{",
        f"    if (n_ > 0) {c}(cudaMalloc(&ptr_, n_ * sizeof(T)));",
        "  }",
        f"  ~{cls}() {{",
        "    if (ptr_ != nullptr) cudaFree(ptr_);",
        "  }",
        f"  {cls}({cls}&& other) noexcept : ptr_(other.ptr_), n_(other.n_) {{",
        "    other.ptr_ = nullptr;",
        "    other.n_ = 0;",
        "  }",
        f"  {cls}& operator=({cls}&& other) noexcept {{",
        "    std::swap(ptr_, other.ptr_);",
        "    std::swap(n_, other.n_);",
        "    return *this;",
        "  }",
        "  void upload(const T* host, size_t count) {",
        f"    {c}(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));",
        "  }",
        "  void download(T* host, size_t count) const {",
        f"    {c}(cudaMemcpy(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost));",
        "  }",
        f"  void zero() {{ {c}(cudaMemset(ptr_, 0, n_ * sizeof(T))); }}",
        "  T* data() { return ptr_; }",
        "  const T* data() const { return ptr_; }",
        "  size_t size() const { return n_; }",
        "",
        " private:",
        "  T* ptr_ = nullptr;",
        "  size_t n_ = 0;",
        "};",
        "",
    ]


def sec_cublas(g: Gen) -> list[str]:
    fn = g.name(suffix="_gemm_blas")
    op_a = g.pick(("CUBLAS_OP_N", "CUBLAS_OP_T"))
    double = g.r.random() < 0.3
    t, call = ("double", "cublasDgemm") if double else ("float", "cublasSgemm")
    return [
        "// C = alpha * op(A) * B + beta * C with cuBLAS (column-major).",
        f"void {fn}(cudaStream_t stream, int m, int n, int k, const {t}* A, const {t}* B, {t}* C,",
        f"{' ' * (6 + len(fn))}{t} alpha = 1, {t} beta = 0) {{",
        "  cublasHandle_t handle;",
        "  NOVA_CUBLAS_CHECK(cublasCreate(&handle));",
        "  NOVA_CUBLAS_CHECK(cublasSetStream(handle, stream));",
        f"  const int lda = {op_a} == CUBLAS_OP_N ? m : k;",
        f"  NOVA_CUBLAS_CHECK({call}(handle, {op_a}, CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, k,",
        "                              &beta, C, m));",
        "  NOVA_CUBLAS_CHECK(cublasDestroy(handle));",
        "}",
        "",
        f"{t} {fn}_norm(cublasHandle_t handle, const {t}* x, int n) {{",
        f"  {t} result = 0;",
        f"  NOVA_CUBLAS_CHECK({'cublasDnrm2' if double else 'cublasSnrm2'}(handle, n, x, 1, &result));",
        "  return result;",
        "}",
        "",
    ]


def sec_curand(g: Gen) -> list[str]:
    fn = g.name(suffix="_random")
    seed = g.num(1, 2**31)
    normal = g.r.random() < 0.5
    gen_call = ("curandGenerateNormal(gen, d_out, n, 0.0f, 1.0f)" if normal
                else "curandGenerateUniform(gen, d_out, n)")
    return [
        f"// Fills d_out with {'N(0, 1)' if normal else 'U(0, 1]'} samples (seed {seed}).",
        f"void {fn}(float* d_out, size_t n, cudaStream_t stream) {{",
        "  curandGenerator_t gen;",
        "  NOVA_CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));",
        f"  NOVA_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, {seed}ULL));",
        "  NOVA_CURAND_CHECK(curandSetStream(gen, stream));",
        f"  NOVA_CURAND_CHECK({gen_call});",
        "  NOVA_CURAND_CHECK(curandDestroyGenerator(gen));",
        "}",
        "",
    ]


def sec_device_query(g: Gen) -> list[str]:
    c = _chk(g)
    fn = g.name(suffix="_pick_device")
    return [
        "// Picks the device with the most multiprocessors and makes it current.",
        f"int {fn}() {{",
        "  int count = 0;",
        f"  {c}(cudaGetDeviceCount(&count));",
        "  int best = 0;",
        "  int best_sms = -1;",
        "  for (int d = 0; d < count; ++d) {",
        "    cudaDeviceProp prop;",
        f"    {c}(cudaGetDeviceProperties(&prop, d));",
        "    if (prop.multiProcessorCount > best_sms) {",
        "      best_sms = prop.multiProcessorCount;",
        "      best = d;",
        "    }",
        '    std::printf("device %d: %s, %d SMs, %zu MiB\\n", d, prop.name,',
        "                prop.multiProcessorCount, prop.totalGlobalMem >> 20);",
        "  }",
        f"  {c}(cudaSetDevice(best));",
        "  return best;",
        "}",
        "",
    ]


def sec_launch_2d(g: Gen) -> list[str]:
    if not g.kernels2d:
        return []
    kernel, t = g.pick(g.kernels2d)
    c = _chk(g)
    fn = g.name(suffix="_launch2d")
    bx = g.pick((8, 16, 32))
    return [
        f"void {fn}(const {t}* d_a, {t}* d_b, int w, int h, cudaStream_t stream) {{",
        f"  dim3 block({bx}, {bx});",
        f"  dim3 grid((w + {bx} - 1) / {bx}, (h + {bx} - 1) / {bx});",
        f"  {kernel}<<<grid, block, 0, stream>>>(d_a, d_b, w, h);",
        f"  {c}(cudaGetLastError());",
        "}",
        "",
    ]


def sec_host_comment_strings(g: Gen) -> list[str]:
    fn = g.name(suffix="_report")
    api = g.pick(("cudaMalloc", "cudaMemcpy", "cudaMemcpyAsync", "cudaStreamSynchronize",
                  "cudaFree", "cudaEventRecord", "cudaDeviceSynchronize"))
    return [
        f"// Note: {api} is asynchronous with respect to the host only for pinned memory;",
        f"// callers that reuse the buffer right after {api} must synchronize first.",
        f"void {fn}(const char* what, size_t bytes, double ms) {{",
        f'  std::fprintf(stderr, "[nova] {api} %s: %zu bytes in %.3f ms (%.2f GB/s)\\n", what,',
        "               bytes, ms, ms > 0 ? bytes / (ms * 1.0e6) : 0.0);",
        "}",
        "",
    ]


# ---- plain C++ (most of a real project) -------------------------------------------------------

def sec_cpu_reference(g: Gen) -> list[str]:
    fn = g.name(suffix="_reference")
    t = g.pick(FLOAT_TYPES)
    f = g.pick(("std::exp", "std::tanh", "std::sqrt", "std::log1p", "std::abs"))
    return [
        f"// CPU reference for {fn.replace('_reference', '')}; used by the tests to check the",
        "// GPU result element by element.",
        f"std::vector<{t}> {fn}(const std::vector<{t}>& x, {t} alpha, {t} beta) {{",
        f"  std::vector<{t}> y(x.size());",
        "  for (size_t i = 0; i < x.size(); ++i) {",
        f"    const {t} v = x[i];",
        f"    {t} r = alpha * v + beta;",
        f"    if (r < {t}(0)) r = -r;",
        f"    y[i] = {f}(r + {t}(1));",
        "  }",
        "  return y;",
        "}",
        "",
    ]


def sec_matrix_class(g: Gen) -> list[str]:
    cls = g.cls()
    return [
        f"// Dense row-major matrix on the host.",
        f"class {cls} {{",
        " public:",
        f"  {cls}(int rows, int cols, double fill = 0.0)",
        "      : rows_(rows), cols_(cols), data_(static_cast<size_t>(rows) * cols, fill) {}",
        "",
        "  int rows() const { return rows_; }",
        "  int cols() const { return cols_; }",
        "  double& operator()(int r, int c) { return data_[static_cast<size_t>(r) * cols_ + c]; }",
        "  double operator()(int r, int c) const { return data_[static_cast<size_t>(r) * cols_ + c]; }",
        "",
        f"  {cls} multiply(const {cls}& other) const {{",
        "    if (cols_ != other.rows_) throw std::invalid_argument(\"shape mismatch\");",
        f"    {cls} out(rows_, other.cols_);",
        "    for (int i = 0; i < rows_; ++i) {",
        "      for (int k = 0; k < cols_; ++k) {",
        "        const double a = (*this)(i, k);",
        "        if (a == 0.0) continue;",
        "        for (int j = 0; j < other.cols_; ++j) out(i, j) += a * other(k, j);",
        "      }",
        "    }",
        "    return out;",
        "  }",
        "",
        f"  {cls} transposed() const {{",
        f"    {cls} out(cols_, rows_);",
        "    for (int i = 0; i < rows_; ++i)",
        "      for (int j = 0; j < cols_; ++j) out(j, i) = (*this)(i, j);",
        "    return out;",
        "  }",
        "",
        "  double frobenius() const {",
        "    double s = 0.0;",
        "    for (double v : data_) s += v * v;",
        "    return std::sqrt(s);",
        "  }",
        "",
        " private:",
        "  int rows_;",
        "  int cols_;",
        "  std::vector<double> data_;",
        "};",
        "",
    ]


def sec_stats(g: Gen) -> list[str]:
    cls = g.cls()
    return [
        "// Running mean / variance (Welford) plus min and max.",
        f"struct {cls} {{",
        "  long long count = 0;",
        "  double mean = 0.0;",
        "  double m2 = 0.0;",
        "  double lo = std::numeric_limits<double>::infinity();",
        "  double hi = -std::numeric_limits<double>::infinity();",
        "",
        "  void add(double x) {",
        "    ++count;",
        "    const double delta = x - mean;",
        "    mean += delta / static_cast<double>(count);",
        "    m2 += delta * (x - mean);",
        "    lo = std::min(lo, x);",
        "    hi = std::max(hi, x);",
        "  }",
        "  double variance() const { return count > 1 ? m2 / (count - 1) : 0.0; }",
        "  double stddev() const { return std::sqrt(variance()); }",
        f"  void merge(const {cls}& o) {{",
        "    if (o.count == 0) return;",
        "    const long long n = count + o.count;",
        "    const double delta = o.mean - mean;",
        "    mean += delta * o.count / n;",
        "    m2 += o.m2 + delta * delta * count * o.count / n;",
        "    count = n;",
        "    lo = std::min(lo, o.lo);",
        "    hi = std::max(hi, o.hi);",
        "  }",
        "};",
        "",
    ]


def sec_config_parser(g: Gen) -> list[str]:
    fn = g.name(suffix="_parse")
    keys = g.r.sample(["block_size", "iterations", "tolerance", "seed", "batch", "device",
                       "warmup", "streams", "tile", "verbose", "output", "precision"], 5)
    lines = [
        "// Parses 'key = value' lines; '#' starts a comment. Unknown keys are an error.",
        f"std::map<std::string, std::string> {fn}(std::istream& in) {{",
        "  std::map<std::string, std::string> out;",
        "  std::string line;",
        "  int lineno = 0;",
        "  while (std::getline(in, line)) {",
        "    ++lineno;",
        "    const auto hash = line.find('#');",
        "    if (hash != std::string::npos) line.erase(hash);",
        "    const auto eq = line.find('=');",
        "    if (eq == std::string::npos) continue;",
        "    auto trim = [](std::string s) {",
        "      const auto b = s.find_first_not_of(\" \\t\");",
        "      const auto e = s.find_last_not_of(\" \\t\");",
        "      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);",
        "    };",
        "    const std::string key = trim(line.substr(0, eq));",
        "    const std::string value = trim(line.substr(eq + 1));",
        "    static const char* const kKnown[] = {" + ", ".join(f'"{k}"' for k in keys) + "};",
        "    bool known = false;",
        "    for (const char* k : kKnown) known = known || key == k;",
        "    if (!known) {",
        "      std::ostringstream msg;",
        "      msg << \"line \" << lineno << \": unknown key '\" << key << \"'\";",
        "      throw std::runtime_error(msg.str());",
        "    }",
        "    out[key] = value;",
        "  }",
        "  return out;",
        "}",
        "",
    ]
    return lines


def sec_enum_switch(g: Gen) -> list[str]:
    enum = g.cls() + "Kind"
    vals = [w.capitalize() for w in g.r.sample(WORDS, g.num(4, 8))]
    lines = [f"enum class {enum} {{"] + [f"  k{v}," for v in vals] + ["};", ""]
    lines += [f"inline const char* to_string({enum} k) {{", "  switch (k) {"]
    for v in vals:
        lines.append(f'    case {enum}::k{v}: return "{v.lower()}";')
    lines += ["  }", '  return "unknown";', "}", ""]
    return lines


def sec_params_struct(g: Gen) -> list[str]:
    cls = g.cls() + "Params"
    fields = g.r.sample([
        ("int", "rows", "1024"), ("int", "cols", "1024"), ("int", "batch", "8"),
        ("float", "epsilon", "1e-5f"), ("float", "momentum", "0.9f"), ("int", "iterations", "100"),
        ("double", "tolerance", "1e-8"), ("bool", "verbose", "false"), ("int", "block", "256"),
        ("unsigned", "seed", "1234u"), ("float", "learning_rate", "3e-4f"), ("int", "stride", "1"),
    ], g.num(4, 8))
    lines = [f"struct {cls} {{"]
    lines += [f"  {t} {n} = {d};" for t, n, d in fields]
    lines += ["", "  // Throws std::invalid_argument when a field is out of range.", "  void validate() const {"]
    for t, n, _ in fields:
        if t in ("int", "float", "double"):
            lines.append(f'    if ({n} <= 0) throw std::invalid_argument("{n} must be positive");')
    lines += ["  }", "};", ""]
    return lines


def sec_utils(g: Gen) -> list[str]:
    p = g.name(1) + "_"
    return [
        "template <typename T>",
        f"constexpr T {p}round_up(T value, T multiple) {{",
        "  return ((value + multiple - 1) / multiple) * multiple;",
        "}",
        "",
        "template <typename T>",
        f"constexpr T {p}clamp(T v, T lo, T hi) {{",
        "  return v < lo ? lo : (v > hi ? hi : v);",
        "}",
        "",
        f"inline bool {p}is_power_of_two(unsigned long long x) {{ return x && !(x & (x - 1)); }}",
        "",
    ]


def sec_compare(g: Gen) -> list[str]:
    fn = g.name(suffix="_matches")
    tol = g.pick(("1e-5", "1e-4", "1e-6"))
    return [
        "// Compares two arrays with a relative tolerance; prints the first few mismatches.",
        "template <typename T>",
        f"bool {fn}(const T* got, const T* want, size_t n, double rtol = {tol}) {{",
        "  size_t bad = 0;",
        "  for (size_t i = 0; i < n; ++i) {",
        "    const double g = static_cast<double>(got[i]);",
        "    const double w = static_cast<double>(want[i]);",
        "    const double err = std::abs(g - w);",
        "    if (err > rtol * std::max(1.0, std::abs(w))) {",
        "      if (bad < 5) {",
        '        std::fprintf(stderr, "mismatch at %zu: got %.8g want %.8g\\n", i, g, w);',
        "      }",
        "      ++bad;",
        "    }",
        "  }",
        "  if (bad > 0) {",
        '    std::fprintf(stderr, "%zu of %zu values differ\\n", bad, n);',
        "  }",
        "  return bad == 0;",
        "}",
        "",
    ]


def sec_solver(g: Gen) -> list[str]:
    fn = g.name(suffix="_jacobi")
    iters = g.num(50, 500)
    return [
        f"// Jacobi iteration for a diagonally dominant system, at most {iters} sweeps.",
        f"int {fn}(const std::vector<double>& a, const std::vector<double>& b,",
        f"{' ' * (5 + len(fn))}std::vector<double>& x, int n, double tol) {{",
        "  std::vector<double> next(n, 0.0);",
        f"  for (int it = 0; it < {iters}; ++it) {{",
        "    double diff = 0.0;",
        "    for (int i = 0; i < n; ++i) {",
        "      double s = b[i];",
        "      for (int j = 0; j < n; ++j) {",
        "        if (j != i) s -= a[i * n + j] * x[j];",
        "      }",
        "      next[i] = s / a[i * n + i];",
        "      diff = std::max(diff, std::abs(next[i] - x[i]));",
        "    }",
        "    x.swap(next);",
        "    if (diff < tol) return it + 1;",
        "  }",
        f"  return {iters};",
        "}",
        "",
    ]


def sec_string_utils(g: Gen) -> list[str]:
    fn = g.name(suffix="_split")
    return [
        f"std::vector<std::string> {fn}(const std::string& s, char sep) {{",
        "  std::vector<std::string> parts;",
        "  std::string current;",
        "  for (char ch : s) {",
        "    if (ch == sep) {",
        "      parts.push_back(current);",
        "      current.clear();",
        "    } else {",
        "      current += ch;",
        "    }",
        "  }",
        "  parts.push_back(current);",
        "  return parts;",
        "}",
        "",
        f"std::string {fn}_join(const std::vector<std::string>& parts, const std::string& sep) {{",
        "  std::string out;",
        "  for (size_t i = 0; i < parts.size(); ++i) {",
        "    if (i) out += sep;",
        "    out += parts[i];",
        "  }",
        "  return out;",
        "}",
        "",
    ]


def sec_debug_block(g: Gen) -> list[str]:
    fn = g.name(suffix="_dump")
    return [
        "#ifdef NOVA_DEBUG",
        f"static void {fn}(const float* v, int n, const char* label) {{",
        '  std::printf("%s:", label);',
        "  for (int i = 0; i < n && i < 16; ++i) std::printf(\" %.4f\", v[i]);",
        '  std::printf(n > 16 ? " ...\\n" : "\\n");',
        "}",
        "#else",
        f"static inline void {fn}(const float*, int, const char*) {{}}",
        "#endif",
        "",
    ]


def sec_doc_comment(g: Gen) -> list[str]:
    topic = g.pick([
        ("Memory model", "Buffers are allocated once with cudaMalloc and reused across calls;",
         "cudaFree happens only at shutdown, since it synchronizes the whole device."),
        ("Streams", "Every public entry point takes a cudaStream_t and never calls",
         "cudaDeviceSynchronize; callers order work with events instead."),
        ("Precision", "Accumulation is done in double on the host and in float on the",
         "device; the tests allow a relative error of 1e-5 between the two."),
        ("Threading", "Objects are not thread-safe. Use one instance per host thread, or",
         "guard calls with a mutex; CUDA handles are per-thread here."),
        ("Errors", "Runtime errors abort through NOVA_CUDA_CHECK. Configuration errors",
         "throw std::invalid_argument before any device work is queued."),
    ])
    return [
        "/*",
        f" * {topic[0]}",
        " * " + "-" * len(topic[0]),
        f" * {topic[1]}",
        f" * {topic[2]}",
        " */",
        "",
    ]


def sec_histogram_cpu(g: Gen) -> list[str]:
    fn = g.name(suffix="_bins")
    return [
        f"std::vector<int> {fn}(const std::vector<float>& values, float lo, float hi, int bins) {{",
        "  std::vector<int> counts(bins, 0);",
        "  if (hi <= lo || bins <= 0) return counts;",
        "  const float width = (hi - lo) / bins;",
        "  for (float v : values) {",
        "    int b = static_cast<int>((v - lo) / width);",
        "    if (b < 0) b = 0;",
        "    if (b >= bins) b = bins - 1;",
        "    ++counts[b];",
        "  }",
        "  return counts;",
        "}",
        "",
    ]


def sec_sort_topk(g: Gen) -> list[str]:
    fn = g.name(suffix="_topk")
    return [
        f"std::vector<std::pair<int, float>> {fn}(const std::vector<float>& scores, int k) {{",
        "  std::vector<std::pair<int, float>> items;",
        "  items.reserve(scores.size());",
        "  for (int i = 0; i < static_cast<int>(scores.size()); ++i) items.emplace_back(i, scores[i]);",
        "  k = std::min<int>(k, static_cast<int>(items.size()));",
        "  std::partial_sort(items.begin(), items.begin() + k, items.end(),",
        "                    [](const auto& a, const auto& b) {",
        "                      return a.second != b.second ? a.second > b.second : a.first < b.first;",
        "                    });",
        "  items.resize(k);",
        "  return items;",
        "}",
        "",
    ]


def sec_particles(g: Gen) -> list[str]:
    cls = g.cls()
    dt = g.pick(("1e-3", "5e-4", "2e-3"))
    return [
        f"struct {cls}Particle {{",
        "  float x, y, z;",
        "  float vx, vy, vz;",
        "  float mass;",
        "};",
        "",
        f"// Explicit Euler step with a softened inverse-square force (O(n^2); dt = {dt}).",
        f"void step_{cls.lower()}(std::vector<{cls}Particle>& ps, float soft = 1e-2f) {{",
        f"  const float dt = {dt}f;",
        "  for (size_t i = 0; i < ps.size(); ++i) {",
        "    float ax = 0, ay = 0, az = 0;",
        "    for (size_t j = 0; j < ps.size(); ++j) {",
        "      if (i == j) continue;",
        "      const float dx = ps[j].x - ps[i].x;",
        "      const float dy = ps[j].y - ps[i].y;",
        "      const float dz = ps[j].z - ps[i].z;",
        "      const float r2 = dx * dx + dy * dy + dz * dz + soft;",
        "      const float inv = ps[j].mass / (r2 * std::sqrt(r2));",
        "      ax += dx * inv;",
        "      ay += dy * inv;",
        "      az += dz * inv;",
        "    }",
        "    ps[i].vx += ax * dt;",
        "    ps[i].vy += ay * dt;",
        "    ps[i].vz += az * dt;",
        "  }",
        "  for (auto& p : ps) {",
        "    p.x += p.vx * dt;",
        "    p.y += p.vy * dt;",
        "    p.z += p.vz * dt;",
        "  }",
        "}",
        "",
    ]


def sec_main(g: Gen) -> list[str]:
    c = _chk(g)
    uses_cuda = g.kind == "cu" or (g.kind == "cpp" and getattr(g, "has_cuda", False))
    lines = [
        "int main(int argc, char** argv) {",
        f"  int n = {g.pick((1 << 16, 1 << 20, 1 << 22, 100000))};",
        f"  int iters = {g.num(3, 50)};",
        "  for (int i = 1; i < argc; ++i) {",
        "    const std::string arg = argv[i];",
        '    if (arg == "--n" && i + 1 < argc) n = std::atoi(argv[++i]);',
        '    else if (arg == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);',
        '    else if (arg == "--help") {',
        '      std::printf("usage: %s [--n N] [--iters K]\\n", argv[0]);',
        "      return 0;",
        "    }",
        "  }",
        "  std::vector<float> data(n);",
        "  for (int i = 0; i < n; ++i) data[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f;",
    ]
    if uses_cuda:
        lines += [
            "  float* d_data = nullptr;",
            f"  {c}(cudaMalloc(&d_data, n * sizeof(float)));",
            f"  {c}(cudaMemcpy(d_data, data.data(), n * sizeof(float), cudaMemcpyHostToDevice));",
            "  for (int it = 0; it < iters; ++it) {",
            f"    {c}(cudaMemset(d_data, 0, sizeof(float)));",
            "  }",
            f"  {c}(cudaDeviceSynchronize());",
            f"  {c}(cudaFree(d_data));",
        ]
    lines += [
        "  double sum = std::accumulate(data.begin(), data.end(), 0.0);",
        '  std::printf("{\\"n\\":%d,\\"iters\\":%d,\\"sum\\":%.6f}\\n", n, iters, sum);',
        "  return EXIT_SUCCESS;",
        "}",
        "",
    ]
    return lines


# ---- header pieces --------------------------------------------------------------------------

def sec_header_decls(g: Gen) -> list[str]:
    lines = ["// Declarations; the definitions live in the matching .cu / .cpp file."]
    for _ in range(g.num(3, 8)):
        fn = g.name()
        ret = g.pick(("void", "float", "int", "double", "size_t", "bool"))
        if g.kind == "h" and not getattr(g, "has_cuda", False):
            args = g.pick(("const float* x, int n", "std::vector<double>& v",
                           "const std::string& path", "int rows, int cols, double* out",
                           "const float* a, const float* b, float* c, int n"))
        else:
            args = g.pick(("const float* d_x, int n, cudaStream_t stream",
                           "float* d_out, size_t n", "const float* d_a, float* d_b, int w, int h",
                           "cudaStream_t stream", "int device, cudaDeviceProp* prop"))
        lines.append(f"{ret} {fn}({args});")
    return lines + [""]


def sec_cuh_inline(g: Gen) -> list[str]:
    name = g.name(suffix="_ld")
    return [
        "template <typename T>",
        f"__device__ __forceinline__ T {name}(const T* p, int i, int n) {{",
        "  return i < n ? __ldg(p + i) : T(0);",
        "}",
        "",
        f"__device__ __forceinline__ unsigned {name}_ballot(bool pred) {{",
        "  return __ballot_sync(0xffffffff, pred);",
        "}",
        "",
        f"__device__ __forceinline__ int {name}_leader() {{",
        "  return __ffs(__activemask()) - 1;",
        "}",
        "",
    ]


DEVICE_SECTIONS = [
    (sec_elementwise_kernel, 6), (sec_warp_helpers, 2), (sec_reduction_kernel, 2),
    (sec_transpose_kernel, 1), (sec_matmul_kernel, 1), (sec_histogram_kernel, 1),
    (sec_atomic_max_float, 1), (sec_scan_kernel, 1), (sec_softmax_kernel, 1),
    (sec_stencil_kernel, 1), (sec_dynamic_smem_kernel, 1), (sec_device_helpers, 2),
    (sec_fp16_block, 1), (sec_constant_poly, 1),
]
CUDA_HOST_SECTIONS = [
    (sec_launcher, 5), (sec_reduce_launcher, 3), (sec_stream_pipeline, 2), (sec_event_timer, 1),
    (sec_device_buffer, 1), (sec_cublas, 1), (sec_curand, 1), (sec_device_query, 1),
    (sec_launch_2d, 2), (sec_host_comment_strings, 2),
]
PLAIN_SECTIONS = [
    (sec_cpu_reference, 4), (sec_matrix_class, 2), (sec_stats, 2), (sec_config_parser, 2),
    (sec_enum_switch, 2), (sec_params_struct, 3), (sec_utils, 2), (sec_compare, 2),
    (sec_solver, 2), (sec_string_utils, 2), (sec_debug_block, 2), (sec_doc_comment, 3),
    (sec_histogram_cpu, 2), (sec_sort_topk, 2), (sec_particles, 1),
]
H_SECTIONS = [
    (sec_header_decls, 5), (sec_params_struct, 4), (sec_enum_switch, 3), (sec_utils, 2),
    (sec_doc_comment, 3), (sec_stats, 1), (sec_matrix_class, 1),
]
CUH_SECTIONS = [
    (sec_warp_helpers, 3), (sec_cuh_inline, 3), (sec_device_helpers, 3), (sec_atomic_max_float, 1),
    (sec_elementwise_kernel, 4), (sec_doc_comment, 2), (sec_params_struct, 2), (sec_utils, 1),
]


def _weighted(g: Gen, table):
    funcs, weights = zip(*table)
    return g.r.choices(funcs, weights=weights, k=1)[0]


def build_file(g: Gen, target_lines: int) -> str:
    lines = license_block(g)
    guard = None
    if g.kind in ("h", "cuh"):
        if g.r.random() < 0.6:
            lines.append("#pragma once")
        else:
            guard = re.sub(r"[^A-Z0-9]", "_", g.rel.upper()) + "_"
            lines += [f"#ifndef {guard}", f"#define {guard}"]
        lines.append("")
    g.has_cuda = g.kind in ("cu", "cuh")
    inc = includes(g)
    if any("cuda_runtime" in line for line in inc):
        g.has_cuda = True
    lines += inc
    if g.kind in ("cu", "cpp") and g.has_cuda:
        if g.r.random() < 0.35:
            lines += local_check_macro(g)
        else:
            lines += ['#include "nova/cuda_check.h"', ""]
    is_main = g.kind in ("cu", "cpp") and g.rel.startswith(("tools/", "examples/")) and \
        g.r.random() < 0.7
    ns = f"{PROJECT}::{g.pick(('detail', 'kernels', 'ops', 'util', 'io', 'solvers', 'ml'))}"
    lines += [f"namespace {ns} {{", ""]
    body: list[str] = []
    budget = target_lines - len(lines) - (30 if is_main else 6)
    while len(body) < budget:
        r = g.r.random()
        if g.kind == "cu":
            # kernels and CUDA host code are a minority of a .cu file's lines
            if r < 0.30:
                sec = _weighted(g, DEVICE_SECTIONS)
            elif r < 0.55:
                sec = _weighted(g, CUDA_HOST_SECTIONS)
            else:
                sec = _weighted(g, PLAIN_SECTIONS)
        elif g.kind == "cuh":
            sec = _weighted(g, CUH_SECTIONS) if r < 0.6 else _weighted(g, PLAIN_SECTIONS)
        elif g.kind == "h":
            sec = _weighted(g, H_SECTIONS) if r < 0.6 else _weighted(g, PLAIN_SECTIONS)
        else:  # cpp
            if g.has_cuda and r < 0.25:
                sec = g.pick((sec_device_buffer, sec_event_timer, sec_stream_pipeline,
                              sec_device_query, sec_host_comment_strings, sec_cublas, sec_curand))
            else:
                sec = _weighted(g, PLAIN_SECTIONS)
        if sec in (sec_cublas, sec_curand) and g.kind not in ("cu", "cpp"):
            continue
        if sec is sec_stream_pipeline and g.kind != "cu":
            g_kernels, g.kernels = g.kernels, []
            body += sec(g)
            g.kernels = g_kernels
            continue
        body += sec(g)
    lines += body
    lines += [f"}}  // namespace {ns}", ""]
    if is_main:
        lines += sec_main(g)
    if guard:
        lines += [f"#endif  // {guard}", ""]
    return "\n".join(lines)


def generate_corpus(root: Path, total_lines: int, seed: int = 20240611) -> dict:
    """Write the project under ``root``; returns counts. Deterministic for a given seed."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    check_rel = "include/nova/cuda_check.h"
    files[check_rel] = CHECK_HEADER
    written = CHECK_HEADER.count("\n")
    headers = [check_rel]
    index = 0
    kinds = ("cu", "cuh", "h", "cpp")
    weights = (40, 12, 20, 28)
    while written < total_lines:
        index += 1
        kind = rng.choices(kinds, weights=weights, k=1)[0]
        folder = rng.choice(FOLDERS)
        if kind in ("h", "cuh") and rng.random() < 0.5:
            folder = rng.choice([f for f in FOLDERS if f.startswith("include/")])
        stem = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{index:03d}"
        rel = f"{folder}/{stem}.{kind}"
        remaining = total_lines - written
        target = rng.randint(150, 850)
        if remaining - target < 150:
            target = max(remaining, 40)
        g = Gen(random.Random(rng.getrandbits(64)), kind, rel, headers[-12:])
        text = build_file(g, target)
        files[rel] = text
        written += text.count("\n")
        if kind in ("h", "cuh") and rel.startswith("include/"):
            headers.append(rel)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    by_ext: dict[str, int] = {}
    for rel in files:
        ext = Path(rel).suffix
        by_ext[ext] = by_ext.get(ext, 0) + 1
    return {"files": len(files), "lines": written, "bytes": sum(len(t) for t in files.values()),
            "by_ext": dict(sorted(by_ext.items())),
            "folders": len({str(Path(r).parent) for r in files})}


# --------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------

_LEX = re.compile(
    r"""(?P<comment>//[^\n]*|/\*[\s\S]*?\*/)|(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])+')""")


def split_code(text: str) -> tuple[str, str]:
    """(code with comments and literals blanked, comments + literals) of a C/C++ file."""
    code_parts, lit_parts = [], []
    pos = 0
    for m in _LEX.finditer(text):
        code_parts.append(text[pos:m.start()])
        code_parts.append(" ")
        lit_parts.append(m.group(0))
        pos = m.end()
    code_parts.append(text[pos:])
    return "".join(code_parts), "\n".join(lit_parts)


SANITY_PATTERNS = {
    "cudaMalloc (code)": (r"\bcudaMalloc\b", "code"),
    "cuda*/cublas*/curand* identifiers (code)": (r"\b(?:cuda|cublas|curand)[A-Z]\w*", "code"),
    "cuda* in comments/strings": (r"\bcuda[A-Z]\w*", "lit"),
    "hip* identifiers (code)": (r"\b(?:hip|hipblas|hiprand)[A-Z]\w*", "code"),
    "#include <cuda_runtime.h>": (r"#include\s*<cuda_runtime\.h>", "all"),
    "__shfl_down_sync (code)": (r"\b__shfl_down_sync\b", "code"),
    "<<< launches (code)": (r"<<<", "code"),
    "hipLaunchKernelGGL (code)": (r"\bhipLaunchKernelGGL\b", "code"),
}


def sanity_counts(paths: list[Path]) -> dict[str, int]:
    counts = {k: 0 for k in SANITY_PATTERNS}
    compiled = {k: (re.compile(p), where) for k, (p, where) in SANITY_PATTERNS.items()}
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        code, lit = split_code(text)
        for key, (rx, where) in compiled.items():
            hay = code if where == "code" else lit if where == "lit" else text
            counts[key] += len(rx.findall(hay))
    return counts


SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                   ".inl")


def copy_tree(tree: Path, root: Path) -> dict:
    """Copy the C/C++/CUDA files of a real tree (symlinks and other files left out)."""
    by_ext: dict[str, int] = {}
    lines = size = 0
    folders = set()
    for path in sorted(tree.rglob("*")):
        if path.is_symlink() or not path.is_file() or not path.name.endswith(SOURCE_SUFFIXES):
            continue
        rel = path.relative_to(tree)
        data = path.read_bytes()
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        lines += data.count(b"\n")
        size += len(data)
        by_ext[path.suffix] = by_ext.get(path.suffix, 0) + 1
        folders.add(str(rel.parent))
    return {"files": sum(by_ext.values()), "lines": lines, "bytes": size,
            "by_ext": dict(sorted(by_ext.items())), "folders": len(folders), "tree": str(tree)}


def count_lines(root: Path) -> tuple[int, list[str]]:
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    return sum((root / r).read_bytes().count(b"\n") for r in rels), rels


# --------------------------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------------------------

def run_timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - t0, proc


def check_ok(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        sys.stderr.write(f"{what} failed with exit code {proc.returncode}\n")
        sys.stderr.write(proc.stdout[-4000:] + "\n" + proc.stderr[-4000:] + "\n")
        raise SystemExit(1)


TORCH_DRIVER = r"""
import json, os, sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
from torch.utils.hipify import hipify_python
t2 = time.perf_counter()
src, out, report = sys.argv[1], sys.argv[2], sys.argv[3]
result = hipify_python.hipify(project_directory=src, output_directory=out, includes=["*"],
                              show_detailed=False, show_progress=False,
                              is_pytorch_extension=True)
t3 = time.perf_counter()
files = {}
for path, res in result.items():
    rel = os.path.relpath(path, out)
    hip = res.hipified_path
    files[rel] = {"hipified": os.path.relpath(hip, out) if hip else None, "status": res.status}
json.dump({"torch": torch.__version__, "import_torch_s": t1 - t0, "import_hipify_s": t2 - t1,
           "call_s": t3 - t2, "files": files}, open(report, "w"))
"""


def ensure_torch_python(arg: str | None, venv: Path) -> str:
    if arg:
        return arg
    py = venv / "bin" / "python"
    probe = [str(py), "-c", "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == "
             f"'{TORCH_VERSION}' else 1)"]
    if py.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return str(py)
    print(f"creating {venv} with torch=={TORCH_VERSION} (cached for later runs)...", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", f"torch=={TORCH_VERSION}"],
                   check=True)
    if subprocess.run(probe, capture_output=True).returncode != 0:
        raise SystemExit(f"{py} does not import torch {TORCH_VERSION}")
    return str(py)


def default_rocmigrate() -> str:
    found = shutil.which("rocmigrate")
    if found:
        return found
    beside = Path(sys.executable).with_name("rocmigrate")
    if beside.exists():
        return str(beside)
    return "/tmp/venv/bin/rocmigrate"


def rocmigrate_version(cmd: list[str]) -> str:
    """migrator.__version__, read with the interpreter named in the rocmigrate script's shebang
    (rocmigrate has no --version option); '?' when that cannot be found."""
    exe = shutil.which(cmd[0]) or cmd[0]
    py = cmd[0] if len(cmd) > 1 and "python" in Path(cmd[0]).name else None
    if py is None:
        try:
            first = Path(exe).read_bytes()[:200].split(b"\n")[0].decode()
            py = first[2:].strip().split()[0] if first.startswith("#!") else None
        except (OSError, UnicodeDecodeError, IndexError):
            py = None
    if not py:
        return "?"
    proc = subprocess.run([py, "-c", "import migrator; print(migrator.__version__)"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "?"


def machine_info() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    try:
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        load = ""
    return {
        "loadavg": load,
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu": cpu, "memory": mem, "python": platform.python_version(),
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=200_000, help="corpus size in lines (newlines)")
    ap.add_argument("--workdir", type=Path, help="work folder (default: a new temp folder)")
    ap.add_argument("--torch-python", help="a python with torch 2.13.0 (default: a cached venv)")
    ap.add_argument("--torch-venv", type=Path, default=DEFAULT_TORCH_VENV,
                    help=f"where the default torch venv lives (default: {DEFAULT_TORCH_VENV})")
    ap.add_argument("--rocmigrate", help="rocmigrate command (default: rocmigrate on PATH or "
                    "beside this python)")
    ap.add_argument("--seed", type=int, default=None, help="corpus seed")
    ap.add_argument("--corpus", choices=("mixed", "dense"), default="mixed",
                    help="generated tree: mixed (mostly C++, the default) or dense (API-heavy "
                    "host and kernel code, benchmarks/dense_corpus.py)")
    ap.add_argument("--tree", type=Path, help="benchmark on a copy of this real tree instead of "
                    "a generated one (C/C++/CUDA files only are copied; --lines is ignored)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each full conversion and the unchanged re-run N times; the "
                    "fastest counts (default 1)")
    ap.add_argument("--skip-jobs1", action="store_true", help="skip the --jobs 1 run")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = ap.parse_args(argv)
    args.repeat = max(1, args.repeat)

    rocmigrate = shlex.split(args.rocmigrate) if args.rocmigrate else [default_rocmigrate()]
    made_tmp = args.workdir is None
    work = Path(tempfile.mkdtemp(prefix="rocmigrate-bench-")) if made_tmp else args.workdir
    work = work.resolve()
    if work.exists() and any(work.iterdir()):
        # only ever remove what this script creates
        for sub in ("corpus", "src_rocmigrate", "src_torch", "out_rocmigrate",
                    "out_rocmigrate_j1", "out_torch", "torch_report.json"):
            p = work / sub
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    work.mkdir(parents=True, exist_ok=True)
    torch_py = ensure_torch_python(args.torch_python, args.torch_venv)

    info = machine_info()
    res: dict = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 "machine": info, "workdir": str(work)}
    print(f"machine: nproc={info['nproc']} cpu={info['cpu']!r} mem={info['memory']} "
          f"python={info['python']} ({info['platform']}); load average {info['loadavg']}")
    if info["loadavg"] and float(info["loadavg"].split()[0]) > 0.5:
        print("warning: the machine is busy (load average above 0.5); timings will be noisy")
    res["rocmigrate_version"] = rocmigrate_version(rocmigrate)

    # 1. corpus ------------------------------------------------------------------------------
    corpus = work / "corpus"
    t0 = time.perf_counter()
    if args.tree is not None:
        stats = copy_tree(args.tree, corpus)
    elif args.corpus == "dense":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from dense_corpus import generate_dense_corpus

        stats = generate_dense_corpus(corpus, args.lines,
                                      *(() if args.seed is None else (args.seed,)))
    else:
        stats = generate_corpus(corpus, args.lines, 20240611 if args.seed is None else args.seed)
    print(f"corpus: {stats['files']} files in {stats['folders']} folders, {stats['lines']} lines, "
          f"{stats['bytes'] / 1e6:.1f} MB, {stats['by_ext']} "
          f"(generated in {time.perf_counter() - t0:.1f} s) -> {corpus}")
    res["corpus"] = stats

    # 2. two copies ---------------------------------------------------------------------------
    src1, src2 = work / "src_rocmigrate", work / "src_torch"
    shutil.copytree(corpus, src1)
    shutil.copytree(corpus, src2)
    lines1, rels = count_lines(src1)
    lines2, rels2 = count_lines(src2)
    assert lines1 == lines2 == stats["lines"] and rels == rels2
    n_lines = lines1
    out1, out1j, out2 = work / "out_rocmigrate", work / "out_rocmigrate_j1", work / "out_torch"

    # Full runs. With --repeat N each is run N times (fresh outputs each time, the tools
    # interleaved) and the fastest run counts: the usual way to damp noise from other load.
    cmd_full = rocmigrate + ["convert", str(src1), "-o", str(out1)]
    cmd_j1 = rocmigrate + ["convert", str(src1), "-o", str(out1j), "--jobs", "1"]
    report = work / "torch_report.json"
    cmd_torch = [torch_py, "-c", TORCH_DRIVER, str(src2), str(out2), str(report)]
    full_runs, j1_runs, torch_runs = [], [], []
    for rep in range(args.repeat):
        tag = f" [{rep + 1}/{args.repeat}]" if args.repeat > 1 else ""
        for out in (out1, out1j, out2):
            if out.exists():
                shutil.rmtree(out)
        print(f"\n$ {shlex.join(cmd_full)}{tag}", flush=True)
        t, proc = run_timed(cmd_full)
        check_ok(proc, "rocmigrate")
        full_runs.append(t)
        print(f"  {t:.2f} s")
        if not args.skip_jobs1:
            print(f"$ {shlex.join(cmd_j1)}{tag}", flush=True)
            t, proc = run_timed(cmd_j1)
            check_ok(proc, "rocmigrate --jobs 1")
            j1_runs.append(t)
            print(f"  {t:.2f} s")
        print(f"$ {torch_py} -c '<hipify driver>' {src2} {out2} {report}{tag}", flush=True)
        t, proc = run_timed(cmd_torch)
        check_ok(proc, "torch hipify")
        tr_run = json.loads(report.read_text())
        torch_runs.append((t, tr_run))
        print(f"  {t:.2f} s wall (import torch {tr_run['import_torch_s']:.2f} s, import hipify "
              f"{tr_run['import_hipify_s']:.2f} s, hipify() {tr_run['call_s']:.2f} s)")
    t_full = min(full_runs)
    res["rocmigrate_full"] = {"cmd": shlex.join(cmd_full), "wall_s": t_full, "runs": full_runs}
    if not args.skip_jobs1:
        res["rocmigrate_jobs1"] = {"cmd": shlex.join(cmd_j1), "wall_s": min(j1_runs),
                                   "runs": j1_runs}
    t_torch = min(t for t, _ in torch_runs)
    tr = dict(min(torch_runs, key=lambda x: x[0])[1])
    tr["call_s"] = min(r["call_s"] for _, r in torch_runs)
    res["torch"] = {"cmd": (f"{torch_py} -c 'import torch; from torch.utils.hipify import "
                            "hipify_python; hipify_python.hipify(project_directory=SRC, "
                            "output_directory=OUT, includes=[\"*\"], show_detailed=False, "
                            "show_progress=False, is_pytorch_extension=True)'"),
                    "version": tr["torch"], "wall_s": t_torch, "call_s": tr["call_s"],
                    "import_torch_s": tr["import_torch_s"],
                    "import_hipify_s": tr["import_hipify_s"],
                    "runs": [t for t, _ in torch_runs],
                    "call_runs": [r["call_s"] for _, r in torch_runs]}

    # unchanged re-run (also repeated; it changes nothing), with the full run's text summary;
    # then once with --format json, whose document holds every finding (reported, not a target)
    cmd_rerun_text = rocmigrate + ["convert", str(src1), "-o", str(out1)]
    cmd_rerun = cmd_rerun_text + ["--format", "json"]
    rerun_runs = []
    for rep in range(args.repeat):
        print(f"$ {shlex.join(cmd_rerun_text)}   # unchanged", flush=True)
        t, proc = run_timed(cmd_rerun_text)
        check_ok(proc, "rocmigrate re-run")
        rerun_runs.append(t)
        print(f"  {t:.2f} s  {proc.stdout.splitlines()[0] if proc.stdout else ''}")
    t_rerun = min(rerun_runs)
    print(f"$ {shlex.join(cmd_rerun)}   # unchanged, JSON report", flush=True)
    t_rerun_json, proc = run_timed(cmd_rerun)
    check_ok(proc, "rocmigrate re-run (json)")
    rerun_summary = json.loads(proc.stdout)["summary"]["files"]
    print(f"  {t_rerun_json:.2f} s  files={rerun_summary}")
    res["rocmigrate_rerun"] = {"cmd": shlex.join(cmd_rerun_text), "wall_s": t_rerun,
                               "runs": rerun_runs, "files": rerun_summary,
                               "pct_of_full": 100 * t_rerun / t_full,
                               "json_wall_s": t_rerun_json}

    # edit one file, re-run
    edited = next(r for r in rels if r.endswith(".cu") and "cudaMalloc" in (src1 / r).read_text())
    path = src1 / edited
    path.write_text(path.read_text() + "\n// benchmark edit: one more helper\n"
                    "__global__ void bench_edit_kernel(float* p) { p[threadIdx.x] = 0.0f; }\n"
                    "void bench_edit_alloc(float** p) { cudaMalloc(p, 64); }\n")
    print(f"$ {shlex.join(cmd_rerun)}   # after editing {edited}", flush=True)
    t_edit, proc = run_timed(cmd_rerun)
    check_ok(proc, "rocmigrate edited re-run")
    edit_summary = json.loads(proc.stdout)["summary"]["files"]
    one_ok = edit_summary.get("converted") == 1
    print(f"  {t_edit:.2f} s  files={edit_summary}  exactly one re-converted: {one_ok}")
    res["rocmigrate_edit"] = {"edited": edited, "wall_s": t_edit, "files": edit_summary,
                              "exactly_one": one_ok, "pct_of_full": 100 * t_edit / t_full}

    # 3. coverage and sanity -------------------------------------------------------------------
    rm_outputs = [out1 / r for r in rels]
    rm_have = sum(p.is_file() for p in rm_outputs)
    torch_map = tr["files"]
    torch_outputs, torch_status = [], {}
    for r in rels:
        entry = torch_map.get(r)
        st = entry["status"] if entry else "missing"
        torch_status[st] = torch_status.get(st, 0) + 1
        if entry and entry["hipified"]:
            torch_outputs.append(out2 / entry["hipified"])
    torch_have = sum(p.is_file() for p in torch_outputs)
    res["coverage"] = {"inputs": len(rels), "rocmigrate_outputs": rm_have,
                       "torch_outputs": torch_have, "torch_status": torch_status}
    # counts on the first (unedited) conversion: rocmigrate's --jobs 1 output when present
    rm_count_root = out1j if not args.skip_jobs1 else out1
    res["sanity"] = {
        "input": sanity_counts([corpus / r for r in rels]),
        "rocmigrate": sanity_counts([rm_count_root / r for r in rels
                                     if (rm_count_root / r).is_file()]),
        "torch": sanity_counts([p for p in torch_outputs if p.is_file()]),
    }

    # report -----------------------------------------------------------------------------------
    rm_lps = n_lines / t_full
    torch_lps = n_lines / t_torch
    torch_call_lps = n_lines / tr["call_s"]
    ratio = rm_lps / torch_lps
    rerun_pct = 100 * t_rerun / t_full
    res["summary"] = {"lines": n_lines, "rocmigrate_lines_per_s": rm_lps,
                      "torch_lines_per_s": torch_lps, "torch_call_lines_per_s": torch_call_lps,
                      "ratio": ratio, "ratio_vs_call": rm_lps / torch_call_lps,
                      "rerun_pct": rerun_pct,
                      "target_ratio_met": ratio >= TARGET_RATIO,
                      "target_rerun_met": rerun_pct < TARGET_RERUN_PCT,
                      "exactly_one_reconverted": one_ok}
    w = 44
    print("\n" + "=" * 78)
    print(f"corpus: {n_lines} lines, {len(rels)} files; machine: nproc={info['nproc']}, "
          f"python {info['python']}; rocmigrate {res['rocmigrate_version']}, torch {tr['torch']}")
    print(f"{'run':<{w}} {'seconds':>9} {'lines/s':>11}")
    print(f"{'rocmigrate (default jobs), end-to-end':<{w}} {t_full:>9.2f} {rm_lps:>11,.0f}")
    if not args.skip_jobs1:
        t_j1 = res["rocmigrate_jobs1"]["wall_s"]
        print(f"{'rocmigrate --jobs 1, end-to-end':<{w}} {t_j1:>9.2f} {n_lines / t_j1:>11,.0f}")
    print(f"{'torch hipify, end-to-end (incl. import)':<{w}} {t_torch:>9.2f} {torch_lps:>11,.0f}")
    print(f"{'torch hipify, hipify() call only':<{w}} {tr['call_s']:>9.2f} {torch_call_lps:>11,.0f}")
    print(f"{'rocmigrate unchanged re-run':<{w}} {t_rerun:>9.2f}   ({rerun_pct:.1f}% of full)")
    print(f"{'rocmigrate unchanged re-run, --format json':<{w}} {t_rerun_json:>9.2f}   "
          f"({100 * t_rerun_json / t_full:.1f}% of full; the document lists every finding)")
    print(f"{'rocmigrate re-run after editing 1 file':<{w}} {t_edit:>9.2f}   "
          f"({100 * t_edit / t_full:.1f}% of full; converted={edit_summary.get('converted')})")
    if args.repeat > 1:
        fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        print(f"(fastest of {args.repeat}; all runs: rocmigrate [{fmt(full_runs)}]"
              + (f", --jobs 1 [{fmt(j1_runs)}]" if j1_runs else "")
              + f", torch [{fmt(res['torch']['runs'])}], hipify() "
              f"[{fmt(res['torch']['call_runs'])}], re-run [{fmt(rerun_runs)}])")
    print(f"\nratio rocmigrate/torch (end-to-end): {ratio:.2f}x   (vs hipify() call only: "
          f"{rm_lps / torch_call_lps:.2f}x)")
    print(f"target rocmigrate >= {TARGET_RATIO:.0f}x torch end-to-end: "
          f"{'MET' if ratio >= TARGET_RATIO else 'NOT MET'}")
    print(f"target unchanged re-run < {TARGET_RERUN_PCT:.0f}% of full: "
          f"{'MET' if rerun_pct < TARGET_RERUN_PCT else 'NOT MET'} ({rerun_pct:.1f}%)")
    print(f"edited re-run converted exactly 1 file: {'yes' if one_ok else 'NO'}")
    print(f"\noutputs: {len(rels)} inputs; rocmigrate wrote {rm_have}; torch has {torch_have} "
          f"(statuses {torch_status})")
    print(f"\n{'sanity count':<{w}} {'input':>9} {'rocmigrate':>11} {'torch':>9}")
    for key in SANITY_PATTERNS:
        print(f"{key:<{w}} {res['sanity']['input'][key]:>9} "
              f"{res['sanity']['rocmigrate'][key]:>11} {res['sanity']['torch'][key]:>9}")
    print("\ncommands:")
    print(f"  {res['rocmigrate_full']['cmd']}")
    if not args.skip_jobs1:
        print(f"  {res['rocmigrate_jobs1']['cmd']}")
    print(f"  {res['torch']['cmd']}")
    print(f"  {res['rocmigrate_rerun']['cmd']}   (unchanged; with --format json once more, and "
          "after the edit)")
    res["loadavg_end"] = machine_info()["loadavg"]
    print(f"\nload average at start: {info['loadavg']}; at end: {res['loadavg_end']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    if made_tmp and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"\nwork folder kept: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
