// gradient_transfer.cu - BERT-large gradients, device -> host: one copy per
// tensor into pageable memory vs. one copy of a contiguous buffer into pinned
// memory.
//
// Part of the rocmigrate demo/validation corpus. The model's 391 gradient
// tensors (335,141,888 fp32 values, 1.34 GB) are built from BERT-large's
// shapes: embeddings (word 30522x1024, position 512x1024, token type 2x1024,
// LayerNorm gamma and beta), 24 encoder layers of 16 tensors each (Q, K, V and
// attention output 1024x1024 + bias, attention LayerNorm, intermediate
// 1024x4096 + bias, output 4096x1024 + bias, output LayerNorm) and the pooler
// (1024x1024 + bias).
//
// Each tensor is its own cudaMalloc'd buffer. per_tensor_ms() copies them one
// by one into a malloc'd (pageable) host buffer, the common naive pattern: each
// pageable copy is staged through a driver buffer. The converter is expected
// to turn that host buffer into pinned memory. one_pinned_ms() copies the same
// values, held in one contiguous device buffer, with a single cudaMemcpy into
// cudaMallocHost memory: the reference for what the link can do.
//
// Element i of tensor t is (t * 131 + i) % 1021, an integer below 2^24, so it
// is exact in fp32 and the check is bit-exact. Each path is run once as a
// warm-up and then REPS times; the best (minimum) time is reported.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bert_large.h"  // the 391 gradient tensors

#define CHECK(call)                                                         \
  do {                                                                      \
    cudaError_t err_ = (call);                                              \
    if (err_ != cudaSuccess) {                                              \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,      \
              __LINE__, cudaGetErrorString(err_));                          \
      exit(EXIT_FAILURE);                                                   \
    }                                                                       \
  } while (0)

#define REPS 3  // timed repetitions of each path, after one warm-up

struct Verify {
  unsigned long long checksum;    // sum of value * ((index % 65536) + 1)
  unsigned long long mismatches;  // elements that differ from the pattern
};

// g[i] = (tensor * 131 + i) % 1021 (tensor < 391 and i < 2^25: fits 32 bits).
__global__ void fill_grad(float* g, size_t count, int tensor) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += stride)
    g[i] = (float)(((unsigned int)tensor * 131u + (unsigned int)i) % 1021u);
}

// Checks all n tensors laid out back to back in `host` against the pattern.
static Verify verify_grads(const float* host, const size_t* counts, int n,
                           const char* name) {
  Verify v = {0ull, 0ull};
  size_t k = 0;  // index into host
  for (int t = 0; t < n; ++t) {
    unsigned int r = ((unsigned int)t * 131u) % 1021u;  // expected value
    for (size_t i = 0; i < counts[t]; ++i, ++k) {
      const unsigned long long weight = (unsigned long long)(k & 0xFFFF) + 1ull;
      if (host[k] == (float)r) {
        v.checksum += (unsigned long long)r * weight;
      } else {
        unsigned int bits;
        memcpy(&bits, &host[k], sizeof(bits));
        v.checksum += (unsigned long long)bits * weight;
        if (v.mismatches < 5)
          fprintf(stderr, "%s: tensor %d element %zu: got %g want %u\n", name,
                  t, i, host[k], r);
        ++v.mismatches;
      }
      if (++r == 1021u) r = 0u;
    }
  }
  return v;
}

static double elapsed_ms(std::chrono::steady_clock::time_point t0,
                         std::chrono::steady_clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// One cudaMemcpy per tensor into pageable host memory (the naive pattern).
static double per_tensor_ms(float* const* d_grads, const size_t* counts, int n,
                            size_t total, Verify* result) {
  float* host = (float*)malloc(total * sizeof(float));
  double best = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    const auto t0 = std::chrono::steady_clock::now();
    size_t offset = 0;
    for (int i = 0; i < n; ++i) {
      CHECK(cudaMemcpy(host + offset, d_grads[i], counts[i] * sizeof(float), cudaMemcpyDeviceToHost));
      offset += counts[i];
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  *result = verify_grads(host, counts, n, "per-tensor");
  free(host);
  return best;
}

// One cudaMemcpy of the contiguous buffer into pinned host memory.
static double one_pinned_ms(const float* d_flat, size_t total,
                            const size_t* counts, int n, Verify* result) {
  float* pinned;
  CHECK(cudaMallocHost(&pinned, total * sizeof(float)));
  double best = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(cudaMemcpy(pinned, d_flat, total * sizeof(float), cudaMemcpyDeviceToHost));
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  *result = verify_grads(pinned, counts, n, "one pinned copy");
  CHECK(cudaFreeHost(pinned));
  return best;
}

int main() {
  const std::vector<size_t> counts = bert_large_shapes();
  const int n = (int)counts.size();
  size_t total = 0;
  for (int t = 0; t < n; ++t) total += counts[t];
  const size_t bytes = total * sizeof(float);

  // One buffer per tensor, and all tensors again back to back in d_flat.
  std::vector<float*> d_grads(n);
  float* d_flat;
  CHECK(cudaMalloc(&d_flat, bytes));
  size_t offset = 0;
  for (int t = 0; t < n; ++t) {
    CHECK(cudaMalloc(&d_grads[t], counts[t] * sizeof(float)));
    const size_t blocks_needed = (counts[t] + 255) / 256;
    const int blocks = blocks_needed < 4096 ? (int)blocks_needed : 4096;
    fill_grad<<<blocks, 256>>>(d_grads[t], counts[t], t);
    fill_grad<<<blocks, 256>>>(d_flat + offset, counts[t], t);
    offset += counts[t];
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  Verify per_tensor = {0ull, 0ull}, pinned = {0ull, 0ull};
  const double per_ms = per_tensor_ms(d_grads.data(), counts.data(), n, total, &per_tensor);
  const double one_ms = one_pinned_ms(d_flat, total, counts.data(), n, &pinned);

  const unsigned long long mismatches = per_tensor.mismatches + pinned.mismatches;
  const bool pass = mismatches == 0 && per_tensor.checksum == pinned.checksum;
  if (per_tensor.checksum != pinned.checksum)
    fprintf(stderr, "checksums differ: per-tensor %llu, one pinned copy %llu\n",
            per_tensor.checksum, pinned.checksum);
  const double gb = (double)bytes / 1.0e9;
  printf("{\"program\":\"gradient_transfer\",\"tensors\":%d,\"parameters\":%llu,"
         "\"bytes\":%llu,\"checksum\":%llu,\"mismatches\":%llu,"
         "\"per_tensor_ms\":%.3f,\"one_pinned_ms\":%.3f,"
         "\"per_tensor_gb_per_s\":%.2f,\"one_pinned_gb_per_s\":%.2f,"
         "\"result\":\"%s\"}\n",
         n, (unsigned long long)total, (unsigned long long)bytes,
         per_tensor.checksum, mismatches, per_ms, one_ms, gb / (per_ms * 1e-3),
         gb / (one_ms * 1e-3), pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  for (int t = 0; t < n; ++t) CHECK(cudaFree(d_grads[t]));
  CHECK(cudaFree(d_flat));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
