// reduction.cu - sum of 2^24 integers on the GPU.
//
// Part of the rocmigrate demo/validation corpus. Each block does a grid-stride
// accumulation, a shared-memory tree reduction down to 32 partial sums, and a
// final warp-level reduction with __shfl_down_sync over 32 lanes; lane 0 then
// atomicAdds the block's sum into a global result.
//
// NOTE: this code deliberately assumes 32-lane warps (WARP_SIZE, the
// 0xffffffff mask and the shuffle offsets 16..1). That is correct on NVIDIA
// GPUs but not on AMD wave64 GPUs, and is exactly what the converter must flag.
//
// Integers keep the check exact: 2^24 values in [0, 100) sum to < 2^31.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                         \
  do {                                                                      \
    cudaError_t err_ = (call);                                              \
    if (err_ != cudaSuccess) {                                              \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,      \
              __LINE__, cudaGetErrorString(err_));                          \
      exit(EXIT_FAILURE);                                                   \
    }                                                                       \
  } while (0)

#define WARP_SIZE 32
#define BLOCK_SIZE 256

// Must be launched with blockDim.x == BLOCK_SIZE.
__global__ void reduce_sum(const int* __restrict__ in, int* result, int n) {
  __shared__ int sdata[BLOCK_SIZE];
  const int tid = threadIdx.x;

  // Grid-stride accumulation into a per-thread partial sum.
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
    sum += in[i];
  sdata[tid] = sum;
  __syncthreads();

  // Shared-memory tree reduction until one warp's worth of values remains.
  for (int s = BLOCK_SIZE / 2; s >= WARP_SIZE; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }

  // Warp-level reduction: hard-coded for 32 lanes.
  if (tid < WARP_SIZE) {
    int v = sdata[tid];
    for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
      v += __shfl_down_sync(0xffffffff, v, offset);
    if (tid == 0) atomicAdd(result, v);
  }
}

int main() {
  const int n = 1 << 24;
  const int blocks = 1024;
  const int iters = 10;

  // Deterministic pseudo-random data (fixed-seed LCG), values in [0, 100).
  std::vector<int> h_in(n);
  uint32_t state = 12345u;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    h_in[i] = static_cast<int>((state >> 8) % 100u);
  }
  long long expected = 0;
  for (int i = 0; i < n; ++i) expected += h_in[i];

  int *d_in, *d_result;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_result, sizeof(int)));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  CHECK(cudaEventRecord(start));
  CHECK(cudaMemcpy(d_in, h_in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float h2d_ms = 0.0f;
  CHECK(cudaEventElapsedTime(&h2d_ms, start, stop));

  // Warm-up launch, then time `iters` launches (each resets the result).
  CHECK(cudaMemset(d_result, 0, sizeof(int)));
  reduce_sum<<<blocks, BLOCK_SIZE>>>(d_in, d_result, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  float total_ms = 0.0f;
  int h_result = 0;
  bool pass = true;
  for (int it = 0; it < iters; ++it) {
    CHECK(cudaMemset(d_result, 0, sizeof(int)));
    CHECK(cudaEventRecord(start));
    reduce_sum<<<blocks, BLOCK_SIZE>>>(d_in, d_result, n);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    total_ms += ms;
    CHECK(cudaMemcpy(&h_result, d_result, sizeof(int), cudaMemcpyDeviceToHost));
    if (static_cast<long long>(h_result) != expected) {
      fprintf(stderr, "iteration %d: GPU sum %d != CPU sum %lld\n", it,
              h_result, expected);
      pass = false;
    }
  }

  const float kernel_ms = total_ms / iters;
  const double gbps = (double)n * sizeof(int) / (kernel_ms * 1.0e6);
  printf("{\"program\":\"reduction\",\"n\":%d,\"kernel_ms\":%.4f,"
         "\"h2d_ms\":%.4f,\"gb_per_s\":%.1f,\"iters\":%d,\"gpu_sum\":%d,"
         "\"cpu_sum\":%lld,\"result\":\"%s\"}\n",
         n, kernel_ms, h2d_ms, gbps, iters, h_result, expected,
         pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_result));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
