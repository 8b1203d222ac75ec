"""The dense tree: API-heavy host and kernel files.

Runtime-wrapper, benchmark and test-driver code names a CUDA API every two or three lines
(allocations, copies, events, streams, error checks around each call, launches, warp
intrinsics and atomics in the kernels). Such a tree costs a converter far more per line than
mostly-C++ code, so ``convert_bench.py --corpus dense`` measures it separately.

Each file is a run of kernels and host wrappers whose statements are drawn by weight from the
two tables below; their placeholders are filled from the file's own names. Deterministic for a
given seed.
"""

from __future__ import annotations

import random
from pathlib import Path

from .template import LineTemplate, weighted, write_tree

# a statement inside a host wrapper: (template, weight); $a/$b device buffers, $h a host
# buffer, $n the length, $s a stream, $e an event, $k a kernel, $i the statement's index
HOST_STATEMENTS = tuple((LineTemplate(text), weight) for text, weight in (
    ("  CHECK(cudaMalloc(&$a, $n * sizeof(float)));", 4),
    ("  CHECK(cudaMemcpy($a, $h, $n * sizeof(float), cudaMemcpyHostToDevice));", 4),
    ("  CHECK(cudaMemcpy($h, $a, $n * sizeof(float), cudaMemcpyDeviceToHost));", 3),
    ("  CHECK(cudaMemcpyAsync($a, $b, $n * sizeof(float), cudaMemcpyDeviceToDevice, $s));", 3),
    ("  CHECK(cudaMemset($a, 0, $n * sizeof(float)));", 2),
    ("  CHECK(cudaMemsetAsync($b, 0, $n * sizeof(float), $s));", 2),
    ("  CHECK(cudaEventRecord($e, $s));", 3),
    ("  CHECK(cudaEventSynchronize($e));", 2),
    ("  CHECK(cudaStreamSynchronize($s));", 3),
    ("  CHECK(cudaStreamWaitEvent($s, $e, 0));", 1),
    ("  CHECK(cudaDeviceSynchronize());", 2),
    ("  CHECK(cudaGetLastError());", 3),
    ("  $k<<<($n + 255) / 256, 256, 0, $s>>>($a, $b, $n);", 4),
    ("  $k<<<dim3(($n + 15) / 16, 4), dim3(16, 4)>>>($a, $b, $n);", 2),
    ("  cudaError_t err_$i = cudaPeekAtLastError();", 1),
    ('  if (err_$i != cudaSuccess) { fprintf(stderr, "%s\\n", cudaGetErrorString(err_$i)); '
     "return; }", 1),
    ("  int dev_$i = 0; CHECK(cudaGetDevice(&dev_$i));", 1),
    ("  cudaDeviceProp prop_$i; CHECK(cudaGetDeviceProperties(&prop_$i, 0));", 1),
    ("  size_t free_$i, total_$i; CHECK(cudaMemGetInfo(&free_$i, &total_$i));", 1),
    ("  CHECK(cudaFuncSetCacheConfig($k, cudaFuncCachePreferShared));", 1),
    ("  CHECK(cudaMemPrefetchAsync($a, $n * sizeof(float), 0, $s));", 1),
    ("  for (int r = 0; r < 4; ++r) $k<<<64, 256, 0, $s>>>($a, $b, $n);", 2),
    ("  total += $n;", 2),
    ("  if (total > (size_t)$n * 64) total = 0;  // keep the counter bounded", 2),
    ("  std::vector<float> scratch_$i($n, 0.0f);", 1),
    ("", 3),
))

# a statement in a kernel body: $i its index, $c a constant, $w a shuffle offset
KERNEL_STATEMENTS = tuple((LineTemplate(text), weight) for text, weight in (
    ("  float v$i = in[i] * ${c}f;", 3),
    ("  v += __shfl_down_sync(0xffffffff, v, $w);", 3),
    ("  v = __shfl_xor_sync(0xffffffff, v, $w);", 2),
    ("  unsigned m$i = __ballot_sync(0xffffffff, v > 0.0f);", 2),
    ("  if (threadIdx.x % 32 == 0) atomicAdd(&out[blockIdx.x], v);", 3),
    ("  tile[threadIdx.y][threadIdx.x] = in[i];", 2),
    ("  __syncthreads();", 3),
    ("  v = __expf(v) + __fdividef(v, 3.0f);", 2),
    ("  v = fmaxf(v, __ldg(&in[i]));", 2),
    ("  int lane$i = threadIdx.x & 31;", 1),
    ("  out[i] = v + tile[threadIdx.x][threadIdx.y];", 2),
    ("  atomicMax(&flags[blockIdx.x], __float_as_int(v));", 1),
))

HEADER = LineTemplate("""\
// $rel: generated dense CUDA benchmark file ($kind)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
$extra
#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \\
  fprintf(stderr, "CUDA error %s at %s:%d\\n", cudaGetErrorString(e_), __FILE__, __LINE__); \\
  exit(1); } } while (0)
""")
EXTRA_INCLUDES = ("", "#include <cuda_fp16.h>", "#include <cublas_v2.h>",
                  "#include <curand_kernel.h>", "#include <cooperative_groups.h>")

KERNEL = LineTemplate("""\
__global__ void $name(float* out, const float* in, int n) {
  __shared__ float tile[32][33];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  int flags[1];
*body
  out[i] = v;
}""")

WRAPPER = LineTemplate("""\
void $name(float* h_x, float* h_y, int n) {
  float *d_x = nullptr, *d_y = nullptr;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  size_t total = 0;
*body
  float ms = 0.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("%s: %.3f ms, %zu elements\\n", __func__, ms, total);
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
}""")


def _kernel(rng: random.Random, name: str, statements: int) -> list[str]:
    body = []
    for index in range(statements):
        template = weighted(rng, KERNEL_STATEMENTS)
        body += template.render({"i": index, "c": rng.randint(2, 9),
                                 "w": rng.choice((1, 2, 4, 8, 16))})
    return KERNEL.render({"name": name, "body": body})


def _wrapper(rng: random.Random, name: str, kernels: list[str], statements: int) -> list[str]:
    body = []
    for index in range(statements):
        a, b = rng.sample(("d_x", "d_y"), 2)
        template = weighted(rng, HOST_STATEMENTS)
        body += template.render({
            "a": a, "b": b, "h": rng.choice(("h_x", "h_y")), "n": "n",
            "s": rng.choice(("stream", "0")), "e": rng.choice(("start", "stop")),
            "k": rng.choice(kernels), "i": index})
    return WRAPPER.render({"name": name, "body": body})


def build_file(rng: random.Random, rel: str, target_lines: int) -> str:
    kind = rel.rsplit(".", 1)[1]
    stem = Path(rel).stem
    lines = HEADER.render({"rel": rel, "kind": kind, "extra": rng.choice(EXTRA_INCLUDES)})
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
    """Write the dense tree of at least ``total_lines`` lines under ``root``; returns its counts
    (as ``generate_corpus``)."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    written = 0
    while written < total_lines:
        ext = rng.choices(("cu", "cuh", "cpp"), weights=(70, 10, 20), k=1)[0]
        folder = rng.choice(("bench", "bench/blas", "wrappers", "wrappers/streams", "tests",
                             "tests/unit", "drivers"))
        rel = f"{folder}/dense_{len(files) + 1:04d}.{ext}"
        files[rel] = build_file(random.Random(rng.getrandbits(64)), rel, rng.randint(200, 700))
        written += files[rel].count("\n")
    return write_tree(root, files)
