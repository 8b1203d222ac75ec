"""The mixed tree: a CUDA project whose lines are mostly plain C++.

A few hundred .cu/.cuh/.h/.cpp files in nested folders of the project "nova": host code with
error-checking macros around the runtime API, cuBLAS/cuRAND in some files, kernels (shared
memory, atomics, warp shuffles, templates, <<<>>> launches) and, for most of its lines, plain
C++ (classes, loops, math, parsing), comments, literals and #if blocks.

A file is a license block, its includes and a namespace filled with sections up to the file's
size. ``SECTIONS`` holds each section's template (see ``template.py``) with the function that
draws its values (names, types, sizes); the tables after it give the weight of each section in
each part of a file. Deterministic for a given seed.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Callable, NamedTuple

from .template import LineTemplate, weighted, write_tree

PROJECT = "nova"  # the namespace / include prefix

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
STD_HEADERS = ("<cstdio>", "<cstdlib>", "<cstdint>", "<cmath>", "<vector>", "<string>",
               "<algorithm>", "<memory>", "<stdexcept>", "<sstream>", "<map>", "<numeric>",
               "<utility>", "<array>", "<functional>", "<limits>", "<chrono>")


class Gen:
    """Per-file generator state: a seeded RNG, unique identifiers and what sections left for
    later ones (kernels to launch, the check macro's name)."""

    def __init__(self, rng: random.Random, kind: str, rel: str, headers: list[str]) -> None:
        self.r = rng
        self.kind = kind  # cu / cuh / h / cpp
        self.rel = rel
        self.headers = headers  # generated project headers available for #include
        self.used: set[str] = set()
        self.check = "NOVA_CUDA_CHECK"  # or the file's own macro
        self.has_cuda = False  # includes the runtime
        self.kernels: list[tuple[str, bool]] = []  # (name, templated) elementwise kernels
        self.reducers: list[str] = []  # warp reductions
        self.kernels2d: list[tuple[str, str]] = []  # (name, element type) 2-D kernels
        self.last_reduce: tuple[str, str, int] | None = None  # (name, type, block), unlaunched

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

    def chance(self, p: float) -> bool:
        return self.r.random() < p


# ---- file-level pieces -----------------------------------------------------------------------

LICENSE = LineTemplate("""\
// Copyright (c) ${year}-2025 The Nova Authors. All rights reserved.
// SPDX-License-Identifier: Apache-2.0
//
// $file: $what.
?note|//
?note|// Every runtime call is wrapped in NOVA_CUDA_CHECK, which reports the failing
?note|// call with cudaGetErrorString and aborts; kernels are checked with
?note|// cudaGetLastError right after their launch.
""")
LICENSE_WHAT = ("GPU kernels and their host launchers", "host-side orchestration for device work",
                "helpers shared by the solver and layer code",
                "reference CPU implementations used by the tests", "device memory management",
                "batched linear algebra on the GPU")

LOCAL_CHECK = LineTemplate("""\
#define $name(call)                                                     \\
  do {                                                                    \\
    cudaError_t err_ = (call);                                            \\
    if (err_ != cudaSuccess) {                                            \\
      fprintf(stderr, "%s failed at %s:%d: %s\\n", #call, __FILE__,         \\
              __LINE__, cudaGetErrorString(err_));                         \\
      exit(EXIT_FAILURE);                                                 \\
    }                                                                     \\
  } while (0)
""")

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


def includes(g: Gen) -> list[str]:
    out: list[str] = []
    if g.kind in ("cu", "cuh"):
        out.append("#include <cuda_runtime.h>")
        if g.chance(0.3):
            out.append("#include <cuda_fp16.h>")
        if g.chance(0.2):
            out.append("#include <cooperative_groups.h>")
    elif g.kind == "cpp" and g.chance(0.45):
        out.append("#include <cuda_runtime_api.h>" if g.chance(0.3)
                   else "#include <cuda_runtime.h>")
    elif g.kind == "h" and g.chance(0.4):
        out.append("#include <cuda_runtime.h>")
    if out:
        out.append("")
    out += [f"#include {h}" for h in sorted(g.r.sample(STD_HEADERS, g.num(3, 8)))]
    local = [h for h in g.headers if h != g.rel]
    if local:
        out.append("")
        for h in sorted(g.r.sample(local, min(len(local), g.num(1, 3)))):
            out.append(f'#include "{h[len("include/"):] if h.startswith("include/") else h}"')
    return out + [""]


# ---- sections: how each draws its values -----------------------------------------------------

def _elementwise(g: Gen) -> dict:
    name = g.name(suffix="_kernel")
    templ = g.chance(0.6)
    t = "T" if templ else g.pick(FLOAT_TYPES)
    op = g.pick(("v * alpha + beta", "v > T(0) ? v : v * alpha", "v * (T(1) / (T(1) + exp(-v)))",
                 "alpha * v * v + beta * v", "min(max(v, -alpha), alpha)", "(v - beta) * alpha"))
    g.kernels.append((name, templ))
    return {"name": name, "templ": templ, "t": t, "op": op if templ else op.replace("T(", f"{t}("),
            "pad": " " * (17 + len(name)), "doc": g.chance(0.6)}


def _warp_helpers(g: Gen) -> dict:
    name = g.name(suffix="_warp")
    g.reducers.append(name)
    shfl = ("__shfl_xor_sync(0xffffffff, v, offset)" if g.chance(0.4)
            else "__shfl_down_sync(0xffffffff, v, offset)")
    op = g.pick(("v += {};", "v = max(v, {});", "v = min(v, {});"))
    return {"name": name, "op": op.format(shfl)}


def _reduction(g: Gen) -> dict:
    block = g.pick(BLOCKS)
    name = g.name(suffix="_reduce")
    t = g.pick(("float", "int", "unsigned int"))
    warp = g.reducers[-1] if g.reducers and g.chance(0.7) else None
    g.last_reduce = (name, t, block)
    return {"block": block, "name": name, "t": t, "warp": warp}


def _transpose(g: Gen) -> dict:
    values = {"tile": g.pick(TILES), "pad": g.pick(("", " + 1")),
              "name": g.name(suffix="_transpose"), "t": g.pick(FLOAT_TYPES)}
    g.kernels2d.append((values["name"], values["t"]))
    return values | {"TILE": f"TILE_{values['name'].upper()}"}


def _stencil(g: Gen) -> dict:
    name = g.name(suffix="_stencil")
    w = [round(g.r.uniform(0.05, 0.3), 3) for _ in range(2)]
    g.kernels2d.append((name, "float"))
    return {"name": name, "center": f"{1 - 4 * w[0]:.3f}", "w0": w[0], "w1": w[1]}


def _launcher(g: Gen) -> dict | None:
    if not g.kernels:
        return None
    kernel, templ = g.pick(g.kernels)
    t = g.pick(FLOAT_TYPES) if templ else "float"
    fn = g.name(suffix="_run")
    block = g.pick(BLOCKS)
    stream = g.chance(0.5)
    return {"kernel": kernel, "launch": f"{kernel}<{t}>" if templ else kernel, "t": t, "fn": fn,
            "pad": " " * (7 + len(fn)), "block": block, "stream": stream, "c": g.check,
            "stream_param": ", cudaStream_t stream" if stream else "",
            "stream_arg": ", stream" if stream else ""}


def _reduce_launcher(g: Gen) -> dict | None:
    if g.last_reduce is None:
        return None
    (kernel, t, block), g.last_reduce = g.last_reduce, None
    return {"kernel": kernel, "t": t, "block": block, "c": g.check, "fn": g.name(suffix="_total")}


def _stream_pipeline(g: Gen) -> dict:
    fn = g.name(suffix="_pipeline")
    nstreams = g.pick((2, 3, 4, 8))
    chunks = nstreams * g.pick((2, 4))
    # the last elementwise kernel of a .cu file, when it is not a template
    kernel = g.kernels[-1][0] if g.kind == "cu" and g.kernels and not g.kernels[-1][1] else None
    return {"c": g.check, "fn": fn, "nstreams": nstreams, "chunks": chunks, "kernel": kernel}


def _cublas(g: Gen) -> dict:
    fn = g.name(suffix="_gemm_blas")
    op_a = g.pick(("CUBLAS_OP_N", "CUBLAS_OP_T"))
    double = g.chance(0.3)
    return {"fn": fn, "pad": " " * (6 + len(fn)), "op_a": op_a,
            "t": "double" if double else "float", "gemm": "cublasDgemm" if double else "cublasSgemm",
            "nrm2": "cublasDnrm2" if double else "cublasSnrm2"}


def _curand(g: Gen) -> dict:
    fn, seed, normal = g.name(suffix="_random"), g.num(1, 2**31), g.chance(0.5)
    return {"fn": fn, "seed": seed, "dist": "N(0, 1)" if normal else "U(0, 1]",
            "call": ("curandGenerateNormal(gen, d_out, n, 0.0f, 1.0f)" if normal
                     else "curandGenerateUniform(gen, d_out, n)")}


def _launch_2d(g: Gen) -> dict | None:
    if not g.kernels2d:
        return None
    kernel, t = g.pick(g.kernels2d)
    return {"kernel": kernel, "t": t, "c": g.check, "fn": g.name(suffix="_launch2d"),
            "bx": g.pick((8, 16, 32))}


def _cpu_reference(g: Gen) -> dict:
    fn = g.name(suffix="_reference")
    return {"fn": fn, "base": fn.replace("_reference", ""), "t": g.pick(FLOAT_TYPES),
            "f": g.pick(("std::exp", "std::tanh", "std::sqrt", "std::log1p", "std::abs"))}


def _config_parser(g: Gen) -> dict:
    fn = g.name(suffix="_parse")
    keys = g.r.sample(["block_size", "iterations", "tolerance", "seed", "batch", "device",
                       "warmup", "streams", "tile", "verbose", "output", "precision"], 5)
    return {"fn": fn, "known": ", ".join(f'"{k}"' for k in keys)}


def _enum_switch(g: Gen) -> dict:
    enum = g.cls() + "Kind"
    vals = [w.capitalize() for w in g.r.sample(WORDS, g.num(4, 8))]
    return {"enum": enum, "members": [f"  k{v}," for v in vals],
            "cases": [f'    case {enum}::k{v}: return "{v.lower()}";' for v in vals]}


PARAM_FIELDS = [
    ("int", "rows", "1024"), ("int", "cols", "1024"), ("int", "batch", "8"),
    ("float", "epsilon", "1e-5f"), ("float", "momentum", "0.9f"), ("int", "iterations", "100"),
    ("double", "tolerance", "1e-8"), ("bool", "verbose", "false"), ("int", "block", "256"),
    ("unsigned", "seed", "1234u"), ("float", "learning_rate", "3e-4f"), ("int", "stride", "1"),
]


def _params_struct(g: Gen) -> dict:
    cls = g.cls() + "Params"
    fields = g.r.sample(PARAM_FIELDS, g.num(4, 8))
    return {"cls": cls, "fields": [f"  {t} {n} = {d};" for t, n, d in fields],
            "checks": [f'    if ({n} <= 0) throw std::invalid_argument("{n} must be positive");'
                       for t, n, _ in fields if t in ("int", "float", "double")]}


DOC_TOPICS = (
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
)


def _doc_comment(g: Gen) -> dict:
    title, first, second = g.pick(DOC_TOPICS)
    return {"title": title, "rule": "-" * len(title), "first": first, "second": second}


def _main(g: Gen) -> dict:
    return {"c": g.check, "n": g.pick((1 << 16, 1 << 20, 1 << 22, 100000)), "iters": g.num(3, 50),
            "cuda": g.kind == "cu" or (g.kind == "cpp" and g.has_cuda)}


def _header_decls(g: Gen) -> dict:
    decls = []
    for _ in range(g.num(3, 8)):
        fn = g.name()
        ret = g.pick(("void", "float", "int", "double", "size_t", "bool"))
        if g.kind == "h" and not g.has_cuda:
            args = g.pick(("const float* x, int n", "std::vector<double>& v",
                           "const std::string& path", "int rows, int cols, double* out",
                           "const float* a, const float* b, float* c, int n"))
        else:
            args = g.pick(("const float* d_x, int n, cudaStream_t stream",
                           "float* d_out, size_t n", "const float* d_a, float* d_b, int w, int h",
                           "cudaStream_t stream", "int device, cudaDeviceProp* prop"))
        decls.append(f"{ret} {fn}({args});")
    return {"decls": decls}


class Section(NamedTuple):
    draw: Callable[[Gen], dict | None]  # the template's values; None: nothing to write here
    template: LineTemplate


def _section(draw, text: str) -> Section:
    return Section(draw, LineTemplate(text))


# ---- sections: the templates -----------------------------------------------------------------

SECTIONS: dict[str, Section] = {
    # device code
    "elementwise_kernel": _section(_elementwise, """\
?doc|// $name: out[i] = f(in[i]) over a grid-stride loop.
?templ|template <typename T>
__global__ void $name(const $t* __restrict__ in, $t* __restrict__ out, int n,
$pad$t alpha, $t beta) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const $t v = in[i];
    out[i] = $op;
  }
}
"""),
    "warp_helpers": _section(_warp_helpers, """\
// Warp-level reduction: assumes 32 lanes and a full mask.
template <typename T>
__device__ __forceinline__ T $name(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    $op
  }
  return v;
}
"""),
    "reduction_kernel": _section(_reduction, """\
// Block-wide sum of $t values; lane 0 of warp 0 adds the block's sum to *result.
__global__ void $name(const $t* in, $t* result, int n) {
  __shared__ $t partial[$block];
  const int tid = threadIdx.x;
  $t acc = 0;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
    acc += in[i];
  }
  partial[tid] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    $t v = partial[tid];
?warp|    v = $warp(v);
?!warp|    for (int offset = 16; offset > 0; offset /= 2) {
?!warp|      v += __shfl_down_sync(0xffffffff, v, offset);
?!warp|    }
    if (tid == 0) atomicAdd(result, v);
  }
}
"""),
    "transpose_kernel": _section(_transpose, """\
#define $TILE $tile

// Tiled transpose through shared memory (${tile}x$tile tiles).
__global__ void $name(const $t* in, $t* out, int rows, int cols) {
  __shared__ $t tile[$TILE][$TILE$pad];
  int x = blockIdx.x * $TILE + threadIdx.x;
  int y = blockIdx.y * $TILE + threadIdx.y;
  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  x = blockIdx.y * $TILE + threadIdx.x;
  y = blockIdx.x * $TILE + threadIdx.y;
  if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
"""),
    "matmul_kernel": _section(lambda g: {"tile": g.pick((16, 32)), "name": g.name(suffix="_gemm")},
                              """\
// C = A * B for row-major M x K and K x N matrices, ${tile}x$tile shared tiles.
template <int TILE = $tile>
__global__ void $name(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[threadIdx.y][threadIdx.x] =
        (row < M && k0 + threadIdx.x < K) ? A[row * K + k0 + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] =
        (col < N && k0 + threadIdx.y < K) ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
"""),
    "histogram_kernel": _section(
        lambda g: {"bins": g.pick((64, 128, 256)), "name": g.name(suffix="_histogram")}, """\
// ${bins}-bin histogram: per-block counts in shared memory, merged with atomics.
__global__ void $name(const unsigned char* data, unsigned int* hist, int n) {
  __shared__ unsigned int local[$bins];
  for (int b = threadIdx.x; b < $bins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&local[data[i] % $bins], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < $bins; b += blockDim.x) {
    if (local[b] != 0) atomicAdd(&hist[b], local[b]);
  }
}
"""),
    "atomic_max_float": _section(lambda g: {"name": g.name(suffix="_atomic_max")}, """\
// Float atomic max through atomicCAS on the bit pattern.
__device__ float $name(float* addr, float value) {
  int* as_int = reinterpret_cast<int*>(addr);
  int old = *as_int;
  int assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= value) break;
    old = atomicCAS(as_int, assumed, __float_as_int(value));
  } while (assumed != old);
  return __int_as_float(old);
}
"""),
    "scan_kernel": _section(
        lambda g: {"block": g.pick((128, 256, 512)), "name": g.name(suffix="_scan")}, """\
// Inclusive Hillis-Steele scan of one ${block}-element block.
__global__ void $name(const int* in, int* out, int* block_sums, int n) {
  __shared__ int buf[$block];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset <<= 1) {
    int add = threadIdx.x >= offset ? buf[threadIdx.x - offset] : 0;
    __syncthreads();
    buf[threadIdx.x] += add;
    __syncthreads();
  }
  if (i < n) out[i] = buf[threadIdx.x];
  if (threadIdx.x == blockDim.x - 1 && block_sums != nullptr) {
    block_sums[blockIdx.x] = buf[threadIdx.x];
  }
}
"""),
    "softmax_kernel": _section(lambda g: {"name": g.name(suffix="_softmax")}, """\
// Row softmax, one warp per row (rows of at most a few thousand columns).
__global__ void $name(const float* x, float* y, int rows, int cols) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= rows) return;
  const float* row = x + (size_t)warp * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, row[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += __expf(row[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
  s = __shfl_sync(0xffffffff, s, 0);
  for (int c = lane; c < cols; c += 32) y[(size_t)warp * cols + c] = __expf(row[c] - m) / s;
}
"""),
    "stencil_kernel": _section(_stencil, """\
// 5-point stencil on a 2-D grid; boundary cells are copied through.
__global__ void $name(const float* u, float* v, int nx, int ny) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const int idx = y * nx + x;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
    v[idx] = u[idx];
    return;
  }
  v[idx] = ${center}f * u[idx] + ${w0}f * (u[idx - 1] + u[idx + 1] +
           u[idx - nx] + u[idx + nx]) + ${w1}f * __ldg(&u[idx]) * 0.0f;
}
"""),
    "dynamic_smem_kernel": _section(lambda g: {"name": g.name(suffix="_window")}, """\
// Sliding-window mean with the window staged in dynamic shared memory.
__global__ void $name(const float* in, float* out, int n, int radius) {
  extern __shared__ float smem[];
  const int base = blockIdx.x * blockDim.x;
  for (int j = threadIdx.x; j < blockDim.x + 2 * radius; j += blockDim.x) {
    const int src = base + j - radius;
    smem[j] = (src >= 0 && src < n) ? in[src] : 0.0f;
  }
  __syncthreads();
  const int i = base + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int k = -radius; k <= radius; ++k) s += smem[threadIdx.x + radius + k];
  out[i] = s / (2 * radius + 1);
}
"""),
    "device_helpers": _section(lambda g: {"name": g.name(), "f": g.pick(MATH_F)}, """\
__host__ __device__ inline float $name(float a, float b) {
  return $f(a) * b + (a > b ? a - b : b - a) * 0.5f;
}

__device__ inline int ${name}_lane() { return threadIdx.x & 31; }
"""),
    "fp16_block": _section(lambda g: {"name": g.name(suffix="_half")}, """\
#if defined(NOVA_ENABLE_FP16)
// Half-precision variant, compiled only when FP16 support is enabled.
__global__ void $name(const __half* in, __half* out, int n, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __half2float(in[i]);
    out[i] = __float2half(v * scale);
  }
}
#else
// $name: FP16 disabled; the float path is used instead.
#endif  // NOVA_ENABLE_FP16
"""),
    "constant_poly": _section(
        lambda g: {"name": g.name(suffix="_poly"), "n": (n := g.pick((4, 8))), "top": n - 1,
                   "c": g.check}, """\
__constant__ float c_$name[$n];

__global__ void ${name}_eval(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = $top; k >= 0; --k) acc = acc * x[i] + c_$name[k];
  y[i] = acc;
}

void ${name}_set(const float* coeffs) {
  $c(cudaMemcpyToSymbol(c_$name, coeffs, $n * sizeof(float)));
}
"""),
    "cuh_inline": _section(lambda g: {"name": g.name(suffix="_ld")}, """\
template <typename T>
__device__ __forceinline__ T $name(const T* p, int i, int n) {
  return i < n ? __ldg(p + i) : T(0);
}

__device__ __forceinline__ unsigned ${name}_ballot(bool pred) {
  return __ballot_sync(0xffffffff, pred);
}

__device__ __forceinline__ int ${name}_leader() {
  return __ffs(__activemask()) - 1;
}
"""),
    # host code with the runtime API
    "launcher": _section(_launcher, """\
// Runs $kernel on host data; returns the device time in milliseconds.
float $fn(const std::vector<$t>& host_in, std::vector<$t>& host_out, $t alpha,
$pad$t beta$stream_param) {
  const int n = static_cast<int>(host_in.size());
  const size_t bytes = n * sizeof($t);
  host_out.resize(n);
  $t* d_in = nullptr;
  $t* d_out = nullptr;
  $c(cudaMalloc(&d_in, bytes));
  $c(cudaMalloc(reinterpret_cast<void**>(&d_out), bytes));
?stream|  $c(cudaMemcpyAsync(d_in, host_in.data(), bytes, cudaMemcpyHostToDevice, stream));
?!stream|  $c(cudaMemcpy(d_in, host_in.data(), bytes, cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  $c(cudaEventCreate(&start));
  $c(cudaEventCreate(&stop));
  const int block = $block;
  const int grid = std::min((n + block - 1) / block, 4096);
  $c(cudaEventRecord(start$stream_arg));
?stream|  $launch<<<grid, block, 0, stream>>>(d_in, d_out, n, alpha, beta);
?!stream|  $launch<<<grid, block>>>(d_in, d_out, n, alpha, beta);
  $c(cudaGetLastError());
  $c(cudaEventRecord(stop$stream_arg));
  $c(cudaEventSynchronize(stop));
  float ms = 0.0f;
  $c(cudaEventElapsedTime(&ms, start, stop));
?stream|  $c(cudaMemcpyAsync(host_out.data(), d_out, bytes, cudaMemcpyDeviceToHost, stream));
?stream|  $c(cudaStreamSynchronize(stream));
?!stream|  $c(cudaMemcpy(host_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
  $c(cudaEventDestroy(start));
  $c(cudaEventDestroy(stop));
  $c(cudaFree(d_in));
  $c(cudaFree(d_out));
  return ms;
}
"""),
    "reduce_launcher": _section(_reduce_launcher, """\
$t $fn(const $t* d_in, int n) {
  $t* d_result = nullptr;
  $c(cudaMalloc(&d_result, sizeof($t)));
  $c(cudaMemset(d_result, 0, sizeof($t)));
  const int blocks = std::min((n + $block - 1) / $block, 1024);
  $kernel<<<blocks, $block>>>(d_in, d_result, n);
  $c(cudaGetLastError());
  $c(cudaDeviceSynchronize());
  $t h_result = 0;
  $c(cudaMemcpy(&h_result, d_result, sizeof($t), cudaMemcpyDeviceToHost));
  $c(cudaFree(d_result));
  return h_result;
}
"""),
    "stream_pipeline": _section(_stream_pipeline, """\
// Splits the work into $chunks chunks over $nstreams streams so that copies of one
// chunk overlap the kernel of another (needs pinned memory: cudaMallocHost).
void $fn(const float* src, float* dst, int n) {
  constexpr int kStreams = $nstreams;
  constexpr int kChunks = $chunks;
  cudaStream_t streams[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    $c(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  }
  const int chunk = (n + kChunks - 1) / kChunks;
  float* h_pinned = nullptr;
  float* d_buf = nullptr;
  $c(cudaMallocHost(&h_pinned, (size_t)n * sizeof(float)));
  $c(cudaMalloc(&d_buf, (size_t)n * sizeof(float)));
  std::copy(src, src + n, h_pinned);
  for (int k = 0; k < kChunks; ++k) {
    const int off = k * chunk;
    const int len = std::min(chunk, n - off);
    if (len <= 0) break;
    cudaStream_t s = streams[k % kStreams];
    $c(cudaMemcpyAsync(d_buf + off, h_pinned + off, len * sizeof(float),
                        cudaMemcpyHostToDevice, s));
?kernel|    $kernel<<<(len + 255) / 256, 256, 0, s>>>(d_buf + off, d_buf + off, len, 1.0f, 0.0f);
?kernel|    $c(cudaGetLastError());
    $c(cudaMemcpyAsync(h_pinned + off, d_buf + off, len * sizeof(float),
                        cudaMemcpyDeviceToHost, s));
  }
  for (int s = 0; s < kStreams; ++s) {
    $c(cudaStreamSynchronize(streams[s]));
    $c(cudaStreamDestroy(streams[s]));
  }
  std::copy(h_pinned, h_pinned + n, dst);
  $c(cudaFreeHost(h_pinned));
  $c(cudaFree(d_buf));
}
"""),
    "event_timer": _section(lambda g: {"c": g.check, "cls": g.cls() + "Timer"}, """\
// Measures device time between start() and stop() on one stream with CUDA events.
class $cls {
 public:
  explicit $cls(cudaStream_t stream = 0) : stream_(stream) {
    $c(cudaEventCreate(&begin_));
    $c(cudaEventCreateWithFlags(&end_, cudaEventDefault));
  }
  ~$cls() {
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }
  $cls(const $cls&) = delete;
  $cls& operator=(const $cls&) = delete;

  void start() { $c(cudaEventRecord(begin_, stream_)); }
  float stop() {
    $c(cudaEventRecord(end_, stream_));
    $c(cudaEventSynchronize(end_));
    float ms = 0.0f;
    $c(cudaEventElapsedTime(&ms, begin_, end_));
    total_ms_ += ms;
    ++count_;
    return ms;
  }
  float mean_ms() const { return count_ ? total_ms_ / count_ : 0.0f; }

 private:
  cudaStream_t stream_;
  cudaEvent_t begin_{};
  cudaEvent_t end_{};
  float total_ms_ = 0.0f;
  int count_ = 0;
};
"""),
    "device_buffer": _section(lambda g: {"c": g.check, "cls": g.cls()}, """\
// Owns a device allocation of n elements of T (cudaMalloc / cudaFree).
template <typename T>
class $cls {
 public:
  $cls() = default;
  explicit $cls(size_t n) : n_(n) {
    if (n_ > 0) $c(cudaMalloc(&ptr_, n_ * sizeof(T)));
  }
  ~$cls() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  $cls($cls&& other) noexcept : ptr_(other.ptr_), n_(other.n_) {
    other.ptr_ = nullptr;
    other.n_ = 0;
  }
  $cls& operator=($cls&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(n_, other.n_);
    return *this;
  }
  void upload(const T* host, size_t count) {
    $c(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* host, size_t count) const {
    $c(cudaMemcpy(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  void zero() { $c(cudaMemset(ptr_, 0, n_ * sizeof(T))); }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return n_; }

 private:
  T* ptr_ = nullptr;
  size_t n_ = 0;
};
"""),
    "cublas": _section(_cublas, """\
// C = alpha * op(A) * B + beta * C with cuBLAS (column-major).
void $fn(cudaStream_t stream, int m, int n, int k, const $t* A, const $t* B, $t* C,
$pad$t alpha = 1, $t beta = 0) {
  cublasHandle_t handle;
  NOVA_CUBLAS_CHECK(cublasCreate(&handle));
  NOVA_CUBLAS_CHECK(cublasSetStream(handle, stream));
  const int lda = $op_a == CUBLAS_OP_N ? m : k;
  NOVA_CUBLAS_CHECK($gemm(handle, $op_a, CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, k,
                              &beta, C, m));
  NOVA_CUBLAS_CHECK(cublasDestroy(handle));
}

$t ${fn}_norm(cublasHandle_t handle, const $t* x, int n) {
  $t result = 0;
  NOVA_CUBLAS_CHECK($nrm2(handle, n, x, 1, &result));
  return result;
}
"""),
    "curand": _section(_curand, """\
// Fills d_out with $dist samples (seed $seed).
void $fn(float* d_out, size_t n, cudaStream_t stream) {
  curandGenerator_t gen;
  NOVA_CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));
  NOVA_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, ${seed}ULL));
  NOVA_CURAND_CHECK(curandSetStream(gen, stream));
  NOVA_CURAND_CHECK($call);
  NOVA_CURAND_CHECK(curandDestroyGenerator(gen));
}
"""),
    "device_query": _section(lambda g: {"c": g.check, "fn": g.name(suffix="_pick_device")}, """\
// Picks the device with the most multiprocessors and makes it current.
int $fn() {
  int count = 0;
  $c(cudaGetDeviceCount(&count));
  int best = 0;
  int best_sms = -1;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    $c(cudaGetDeviceProperties(&prop, d));
    if (prop.multiProcessorCount > best_sms) {
      best_sms = prop.multiProcessorCount;
      best = d;
    }
    std::printf("device %d: %s, %d SMs, %zu MiB\\n", d, prop.name,
                prop.multiProcessorCount, prop.totalGlobalMem >> 20);
  }
  $c(cudaSetDevice(best));
  return best;
}
"""),
    "launch_2d": _section(_launch_2d, """\
void $fn(const $t* d_a, $t* d_b, int w, int h, cudaStream_t stream) {
  dim3 block($bx, $bx);
  dim3 grid((w + $bx - 1) / $bx, (h + $bx - 1) / $bx);
  $kernel<<<grid, block, 0, stream>>>(d_a, d_b, w, h);
  $c(cudaGetLastError());
}
"""),
    "host_comment_strings": _section(
        lambda g: {"fn": g.name(suffix="_report"),
                   "api": g.pick(("cudaMalloc", "cudaMemcpy", "cudaMemcpyAsync",
                                  "cudaStreamSynchronize", "cudaFree", "cudaEventRecord",
                                  "cudaDeviceSynchronize"))}, """\
// Note: $api is asynchronous with respect to the host only for pinned memory;
// callers that reuse the buffer right after $api must synchronize first.
void $fn(const char* what, size_t bytes, double ms) {
  std::fprintf(stderr, "[nova] $api %s: %zu bytes in %.3f ms (%.2f GB/s)\\n", what,
               bytes, ms, ms > 0 ? bytes / (ms * 1.0e6) : 0.0);
}
"""),
    # plain C++ (most of a real project)
    "cpu_reference": _section(_cpu_reference, """\
// CPU reference for $base; used by the tests to check the
// GPU result element by element.
std::vector<$t> $fn(const std::vector<$t>& x, $t alpha, $t beta) {
  std::vector<$t> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const $t v = x[i];
    $t r = alpha * v + beta;
    if (r < $t(0)) r = -r;
    y[i] = $f(r + $t(1));
  }
  return y;
}
"""),
    "matrix_class": _section(lambda g: {"cls": g.cls()}, """\
// Dense row-major matrix on the host.
class $cls {
 public:
  $cls(int rows, int cols, double fill = 0.0)
      : rows_(rows), cols_(cols), data_(static_cast<size_t>(rows) * cols, fill) {}

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  double& operator()(int r, int c) { return data_[static_cast<size_t>(r) * cols_ + c]; }
  double operator()(int r, int c) const { return data_[static_cast<size_t>(r) * cols_ + c]; }

  $cls multiply(const $cls& other) const {
    if (cols_ != other.rows_) throw std::invalid_argument("shape mismatch");
    $cls out(rows_, other.cols_);
    for (int i = 0; i < rows_; ++i) {
      for (int k = 0; k < cols_; ++k) {
        const double a = (*this)(i, k);
        if (a == 0.0) continue;
        for (int j = 0; j < other.cols_; ++j) out(i, j) += a * other(k, j);
      }
    }
    return out;
  }

  $cls transposed() const {
    $cls out(cols_, rows_);
    for (int i = 0; i < rows_; ++i)
      for (int j = 0; j < cols_; ++j) out(j, i) = (*this)(i, j);
    return out;
  }

  double frobenius() const {
    double s = 0.0;
    for (double v : data_) s += v * v;
    return std::sqrt(s);
  }

 private:
  int rows_;
  int cols_;
  std::vector<double> data_;
};
"""),
    "stats": _section(lambda g: {"cls": g.cls()}, """\
// Running mean / variance (Welford) plus min and max.
struct $cls {
  long long count = 0;
  double mean = 0.0;
  double m2 = 0.0;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();

  void add(double x) {
    ++count;
    const double delta = x - mean;
    mean += delta / static_cast<double>(count);
    m2 += delta * (x - mean);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  double variance() const { return count > 1 ? m2 / (count - 1) : 0.0; }
  double stddev() const { return std::sqrt(variance()); }
  void merge(const $cls& o) {
    if (o.count == 0) return;
    const long long n = count + o.count;
    const double delta = o.mean - mean;
    mean += delta * o.count / n;
    m2 += o.m2 + delta * delta * count * o.count / n;
    count = n;
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
  }
};
"""),
    "config_parser": _section(_config_parser, """\
// Parses 'key = value' lines; '#' starts a comment. Unknown keys are an error.
std::map<std::string, std::string> $fn(std::istream& in) {
  std::map<std::string, std::string> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \\t");
      const auto e = s.find_last_not_of(" \\t");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    static const char* const kKnown[] = {$known};
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) {
      std::ostringstream msg;
      msg << "line " << lineno << ": unknown key '" << key << "'";
      throw std::runtime_error(msg.str());
    }
    out[key] = value;
  }
  return out;
}
"""),
    "enum_switch": _section(_enum_switch, """\
enum class $enum {
*members
};

inline const char* to_string($enum k) {
  switch (k) {
*cases
  }
  return "unknown";
}
"""),
    "params_struct": _section(_params_struct, """\
struct $cls {
*fields

  // Throws std::invalid_argument when a field is out of range.
  void validate() const {
*checks
  }
};
"""),
    "utils": _section(lambda g: {"p": g.name(1) + "_"}, """\
template <typename T>
constexpr T ${p}round_up(T value, T multiple) {
  return ((value + multiple - 1) / multiple) * multiple;
}

template <typename T>
constexpr T ${p}clamp(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

inline bool ${p}is_power_of_two(unsigned long long x) { return x && !(x & (x - 1)); }
"""),
    "compare": _section(
        lambda g: {"fn": g.name(suffix="_matches"), "tol": g.pick(("1e-5", "1e-4", "1e-6"))},
        """\
// Compares two arrays with a relative tolerance; prints the first few mismatches.
template <typename T>
bool $fn(const T* got, const T* want, size_t n, double rtol = $tol) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]);
    const double w = static_cast<double>(want[i]);
    const double err = std::abs(g - w);
    if (err > rtol * std::max(1.0, std::abs(w))) {
      if (bad < 5) {
        std::fprintf(stderr, "mismatch at %zu: got %.8g want %.8g\\n", i, g, w);
      }
      ++bad;
    }
  }
  if (bad > 0) {
    std::fprintf(stderr, "%zu of %zu values differ\\n", bad, n);
  }
  return bad == 0;
}
"""),
    "solver": _section(
        lambda g: {"fn": (fn := g.name(suffix="_jacobi")), "pad": " " * (5 + len(fn)),
                   "iters": g.num(50, 500)}, """\
// Jacobi iteration for a diagonally dominant system, at most $iters sweeps.
int $fn(const std::vector<double>& a, const std::vector<double>& b,
${pad}std::vector<double>& x, int n, double tol) {
  std::vector<double> next(n, 0.0);
  for (int it = 0; it < $iters; ++it) {
    double diff = 0.0;
    for (int i = 0; i < n; ++i) {
      double s = b[i];
      for (int j = 0; j < n; ++j) {
        if (j != i) s -= a[i * n + j] * x[j];
      }
      next[i] = s / a[i * n + i];
      diff = std::max(diff, std::abs(next[i] - x[i]));
    }
    x.swap(next);
    if (diff < tol) return it + 1;
  }
  return $iters;
}
"""),
    "string_utils": _section(lambda g: {"fn": g.name(suffix="_split")}, """\
std::vector<std::string> $fn(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string current;
  for (char ch : s) {
    if (ch == sep) {
      parts.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  parts.push_back(current);
  return parts;
}

std::string ${fn}_join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}
"""),
    "debug_block": _section(lambda g: {"fn": g.name(suffix="_dump")}, """\
#ifdef NOVA_DEBUG
static void $fn(const float* v, int n, const char* label) {
  std::printf("%s:", label);
  for (int i = 0; i < n && i < 16; ++i) std::printf(" %.4f", v[i]);
  std::printf(n > 16 ? " ...\\n" : "\\n");
}
#else
static inline void $fn(const float*, int, const char*) {}
#endif
"""),
    "doc_comment": _section(_doc_comment, """\
/*
 * $title
 * $rule
 * $first
 * $second
 */
"""),
    "histogram_cpu": _section(lambda g: {"fn": g.name(suffix="_bins")}, """\
std::vector<int> $fn(const std::vector<float>& values, float lo, float hi, int bins) {
  std::vector<int> counts(bins, 0);
  if (hi <= lo || bins <= 0) return counts;
  const float width = (hi - lo) / bins;
  for (float v : values) {
    int b = static_cast<int>((v - lo) / width);
    if (b < 0) b = 0;
    if (b >= bins) b = bins - 1;
    ++counts[b];
  }
  return counts;
}
"""),
    "sort_topk": _section(lambda g: {"fn": g.name(suffix="_topk")}, """\
std::vector<std::pair<int, float>> $fn(const std::vector<float>& scores, int k) {
  std::vector<std::pair<int, float>> items;
  items.reserve(scores.size());
  for (int i = 0; i < static_cast<int>(scores.size()); ++i) items.emplace_back(i, scores[i]);
  k = std::min<int>(k, static_cast<int>(items.size()));
  std::partial_sort(items.begin(), items.begin() + k, items.end(),
                    [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  items.resize(k);
  return items;
}
"""),
    "particles": _section(
        lambda g: {"cls": (cls := g.cls()), "lower": cls.lower(),
                   "dt": g.pick(("1e-3", "5e-4", "2e-3"))}, """\
struct ${cls}Particle {
  float x, y, z;
  float vx, vy, vz;
  float mass;
};

// Explicit Euler step with a softened inverse-square force (O(n^2); dt = $dt).
void step_$lower(std::vector<${cls}Particle>& ps, float soft = 1e-2f) {
  const float dt = ${dt}f;
  for (size_t i = 0; i < ps.size(); ++i) {
    float ax = 0, ay = 0, az = 0;
    for (size_t j = 0; j < ps.size(); ++j) {
      if (i == j) continue;
      const float dx = ps[j].x - ps[i].x;
      const float dy = ps[j].y - ps[i].y;
      const float dz = ps[j].z - ps[i].z;
      const float r2 = dx * dx + dy * dy + dz * dz + soft;
      const float inv = ps[j].mass / (r2 * std::sqrt(r2));
      ax += dx * inv;
      ay += dy * inv;
      az += dz * inv;
    }
    ps[i].vx += ax * dt;
    ps[i].vy += ay * dt;
    ps[i].vz += az * dt;
  }
  for (auto& p : ps) {
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
  }
}
"""),
    "header_decls": _section(_header_decls, """\
// Declarations; the definitions live in the matching .cu / .cpp file.
*decls
"""),
    # after the namespace of tools/ and examples/ programs
    "main": _section(_main, """\
int main(int argc, char** argv) {
  int n = $n;
  int iters = $iters;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--n" && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (arg == "--iters" && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (arg == "--help") {
      std::printf("usage: %s [--n N] [--iters K]\\n", argv[0]);
      return 0;
    }
  }
  std::vector<float> data(n);
  for (int i = 0; i < n; ++i) data[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f;
?cuda|  float* d_data = nullptr;
?cuda|  $c(cudaMalloc(&d_data, n * sizeof(float)));
?cuda|  $c(cudaMemcpy(d_data, data.data(), n * sizeof(float), cudaMemcpyHostToDevice));
?cuda|  for (int it = 0; it < iters; ++it) {
?cuda|    $c(cudaMemset(d_data, 0, sizeof(float)));
?cuda|  }
?cuda|  $c(cudaDeviceSynchronize());
?cuda|  $c(cudaFree(d_data));
  double sum = std::accumulate(data.begin(), data.end(), 0.0);
  std::printf("{\\"n\\":%d,\\"iters\\":%d,\\"sum\\":%.6f}\\n", n, iters, sum);
  return EXIT_SUCCESS;
}
"""),
}

# (section, weight) for each part of a file; the order matters to the seeded draw
DEVICE_SECTIONS = (
    ("elementwise_kernel", 6), ("warp_helpers", 2), ("reduction_kernel", 2),
    ("transpose_kernel", 1), ("matmul_kernel", 1), ("histogram_kernel", 1),
    ("atomic_max_float", 1), ("scan_kernel", 1), ("softmax_kernel", 1), ("stencil_kernel", 1),
    ("dynamic_smem_kernel", 1), ("device_helpers", 2), ("fp16_block", 1), ("constant_poly", 1),
)
CUDA_HOST_SECTIONS = (
    ("launcher", 5), ("reduce_launcher", 3), ("stream_pipeline", 2), ("event_timer", 1),
    ("device_buffer", 1), ("cublas", 1), ("curand", 1), ("device_query", 1), ("launch_2d", 2),
    ("host_comment_strings", 2),
)
PLAIN_SECTIONS = (
    ("cpu_reference", 4), ("matrix_class", 2), ("stats", 2), ("config_parser", 2),
    ("enum_switch", 2), ("params_struct", 3), ("utils", 2), ("compare", 2), ("solver", 2),
    ("string_utils", 2), ("debug_block", 2), ("doc_comment", 3), ("histogram_cpu", 2),
    ("sort_topk", 2), ("particles", 1),
)
H_SECTIONS = (
    ("header_decls", 5), ("params_struct", 4), ("enum_switch", 3), ("utils", 2),
    ("doc_comment", 3), ("stats", 1), ("matrix_class", 1),
)
CUH_SECTIONS = (
    ("warp_helpers", 3), ("cuh_inline", 3), ("device_helpers", 3), ("atomic_max_float", 1),
    ("elementwise_kernel", 4), ("doc_comment", 2), ("params_struct", 2), ("utils", 1),
)
# the CUDA sections of a .cpp file that includes the runtime, drawn uniformly
CPP_CUDA_SECTIONS = ("device_buffer", "event_timer", "stream_pipeline", "device_query",
                     "host_comment_strings", "cublas", "curand")


def render_section(g: Gen, name: str) -> list[str]:
    entry = SECTIONS[name]
    values = entry.draw(g)
    return [] if values is None else entry.template.render(values)


def _next_section(g: Gen) -> str:
    r = g.r.random()
    if g.kind == "cu":  # kernels and CUDA host code are a minority of a .cu file's lines
        if r < 0.30:
            return weighted(g.r, DEVICE_SECTIONS)
        if r < 0.55:
            return weighted(g.r, CUDA_HOST_SECTIONS)
    elif g.kind == "cuh" and r < 0.6:
        return weighted(g.r, CUH_SECTIONS)
    elif g.kind == "h" and r < 0.6:
        return weighted(g.r, H_SECTIONS)
    elif g.kind == "cpp" and g.has_cuda and r < 0.25:
        return g.pick(CPP_CUDA_SECTIONS)
    return weighted(g.r, PLAIN_SECTIONS)


def build_file(g: Gen, target_lines: int) -> str:
    lines = LICENSE.render({"year": g.num(2016, 2024), "file": Path(g.rel).name,
                            "what": g.pick(LICENSE_WHAT), "note": g.chance(0.5)})
    guard = None
    if g.kind in ("h", "cuh"):
        if g.chance(0.6):
            lines.append("#pragma once")
        else:
            guard = re.sub(r"[^A-Z0-9]", "_", g.rel.upper()) + "_"
            lines += [f"#ifndef {guard}", f"#define {guard}"]
        lines.append("")
    inc = includes(g)
    g.has_cuda = g.kind in ("cu", "cuh") or any("cuda_runtime" in line for line in inc)
    lines += inc
    if g.kind in ("cu", "cpp") and g.has_cuda:
        if g.chance(0.35):
            g.check = g.pick(("CHECK", "CUDA_CHECK", "CK", "CHECK_CUDA"))
            lines += LOCAL_CHECK.render({"name": g.check})
        else:
            lines += ['#include "nova/cuda_check.h"', ""]
    is_main = g.kind in ("cu", "cpp") and g.rel.startswith(("tools/", "examples/")) and \
        g.chance(0.7)
    ns = f"{PROJECT}::{g.pick(('detail', 'kernels', 'ops', 'util', 'io', 'solvers', 'ml'))}"
    lines += [f"namespace {ns} {{", ""]
    body: list[str] = []
    budget = target_lines - len(lines) - (30 if is_main else 6)
    while len(body) < budget:
        body += render_section(g, _next_section(g))
    lines += body
    lines += [f"}}  // namespace {ns}", ""]
    if is_main:
        lines += render_section(g, "main")
    if guard:
        lines += [f"#endif  // {guard}", ""]
    return "\n".join(lines)


def generate_corpus(root: Path, total_lines: int, seed: int = 20240611) -> dict:
    """Write the mixed tree of at least ``total_lines`` lines under ``root``; returns its counts
    (files, lines, bytes, by_ext, folders)."""
    rng = random.Random(seed)
    check_rel = "include/nova/cuda_check.h"
    files = {check_rel: CHECK_HEADER}
    written = CHECK_HEADER.count("\n")
    headers = [check_rel]
    index = 0
    while written < total_lines:
        index += 1
        kind = rng.choices(("cu", "cuh", "h", "cpp"), weights=(40, 12, 20, 28), k=1)[0]
        folder = rng.choice(FOLDERS)
        if kind in ("h", "cuh") and rng.random() < 0.5:
            folder = rng.choice([f for f in FOLDERS if f.startswith("include/")])
        rel = f"{folder}/{rng.choice(WORDS)}_{rng.choice(WORDS)}_{index:03d}.{kind}"
        remaining = total_lines - written
        target = rng.randint(150, 850)
        if remaining - target < 150:
            target = max(remaining, 40)
        g = Gen(random.Random(rng.getrandbits(64)), kind, rel, headers[-12:])
        files[rel] = build_file(g, target)
        written += files[rel].count("\n")
        if kind in ("h", "cuh") and rel.startswith("include/"):
            headers.append(rel)
    return write_tree(root, files)
