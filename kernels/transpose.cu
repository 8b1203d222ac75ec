// transpose.cu - 4096x4096 float matrix transpose, naive vs. tiled.
//
// Part of the rocmigrate demo/validation corpus. The tiled kernel stages a
// 32x32 tile in shared memory so that both the global read and the global
// write are coalesced.
//
// NOTE: the tile is deliberately unpadded (tile[TILE_DIM][TILE_DIM]). Reading
// a column of it (tile[threadIdx.x][...]) hits the same shared-memory bank 32
// times, a 32-way bank conflict. The usual fix is tile[TILE_DIM][TILE_DIM + 1];
// the converter is expected to detect and pad this.
//
// A transpose only moves bits, so the check is exact.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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

#define TILE_DIM 32
#define BLOCK_ROWS 8

// out (cols x rows) = transpose of in (rows x cols). Coalesced reads,
// strided writes.
__global__ void transpose_naive(float* out, const float* in, int rows,
                                int cols) {
  int x = blockIdx.x * TILE_DIM + threadIdx.x;  // column in `in`
  int y = blockIdx.y * TILE_DIM + threadIdx.y;  // row in `in`
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows) out[x * rows + (y + j)] = in[(y + j) * cols + x];
}

// Shared-memory tiled transpose; each block moves one TILE_DIM x TILE_DIM tile
// with TILE_DIM x BLOCK_ROWS threads.
__global__ void transpose_tiled(float* out, const float* in, int rows,
                                int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM];  // unpadded: bank conflicts

  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // column in `out`
  y = blockIdx.x * TILE_DIM + threadIdx.y;  // row in `out`
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < rows && y + j < cols)
      out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Compares a GPU result against the CPU reference. memcmp keeps the common
// (all-equal) case fast even in an unoptimized host build.
static int check(const std::vector<float>& out, const std::vector<float>& ref,
                 const char* name) {
  if (memcmp(out.data(), ref.data(), out.size() * sizeof(float)) == 0) return 0;
  int errors = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != ref[i]) {
      if (errors < 5)
        fprintf(stderr, "%s: mismatch at %zu: got %g want %g\n", name, i,
                out[i], ref[i]);
      ++errors;
    }
  return errors;
}

int main() {
  const int rows = 4096, cols = 4096;
  const size_t count = (size_t)rows * cols;
  const size_t bytes = count * sizeof(float);
  const int iters = 10;

  std::vector<float> h_in(count), h_out(count), h_ref(count);
  for (size_t i = 0; i < count; ++i) h_in[i] = static_cast<float>(i % 65521);
  // CPU reference transpose, walked in 32x32 blocks to stay in cache.
  for (int r0 = 0; r0 < rows; r0 += 32)
    for (int c0 = 0; c0 < cols; c0 += 32)
      for (int r = r0; r < rows && r < r0 + 32; ++r)
        for (int c = c0; c < cols && c < c0 + 32; ++c)
          h_ref[(size_t)c * rows + r] = h_in[(size_t)r * cols + c];

  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, bytes));
  CHECK(cudaMalloc(&d_out, bytes));
  CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));

  dim3 block(TILE_DIM, BLOCK_ROWS);
  dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  float ms[2] = {0.0f, 0.0f};
  int errors[2] = {0, 0};
  const char* names[2] = {"naive", "tiled"};
  for (int k = 0; k < 2; ++k) {
    CHECK(cudaMemset(d_out, 0, bytes));
    // Warm-up launch, then `iters` timed launches.
    if (k == 0) transpose_naive<<<grid, block>>>(d_out, d_in, rows, cols);
    else transpose_tiled<<<grid, block>>>(d_out, d_in, rows, cols);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(start));
    for (int it = 0; it < iters; ++it) {
      if (k == 0) transpose_naive<<<grid, block>>>(d_out, d_in, rows, cols);
      else transpose_tiled<<<grid, block>>>(d_out, d_in, rows, cols);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms[k], start, stop));
    ms[k] /= iters;
    CHECK(cudaMemcpy(h_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    errors[k] = check(h_out, h_ref, names[k]);
  }

  const bool pass = errors[0] == 0 && errors[1] == 0;
  // Effective bandwidth: each element is read once and written once.
  const double gb = 2.0 * bytes / 1.0e9;
  printf("{\"program\":\"transpose\",\"rows\":%d,\"cols\":%d,"
         "\"kernel_ms\":%.4f,\"naive_ms\":%.4f,\"tiled_ms\":%.4f,"
         "\"naive_gb_per_s\":%.1f,\"tiled_gb_per_s\":%.1f,\"iters\":%d,"
         "\"errors\":%d,\"result\":\"%s\"}\n",
         rows, cols, ms[1], ms[0], ms[1], gb / (ms[0] * 1e-3),
         gb / (ms[1] * 1e-3), iters, errors[0] + errors[1],
         pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
