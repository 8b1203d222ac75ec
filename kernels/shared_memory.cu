// shared_memory.cu - four shared-memory (LDS) access patterns.
//
// Part of the rocmigrate demo/validation corpus. Each pattern is its own
// kernel, timed with CUDA events (one warm-up launch, then the best of ITERS
// launches) and checked exactly on the host:
//   (a) sequential: a 4096x4096 float matrix is copied through a
//       __shared__ float tile[TILE][TILE], written and read row-wise
//       (tile[threadIdx.y][threadIdx.x]): no bank conflicts.
//   (b) transpose: the 4096x4096 tiled transpose with an UNPADDED tile, written
//       by rows and read by columns (tile[threadIdx.x][threadIdx.y + j]): a
//       32-way bank conflict, which the converter is expected to pad away
//       ([TILE][TILE + 1]).
//   (c) random: like (a), but each thread reads the tile at a fixed
//       pseudo-random permutation of its index (the permutation table is in
//       global memory): a mix of bank conflicts.
//   (d) reduction: a block sum in DYNAMIC shared memory
//       (extern __shared__ float smem[], sized at launch), which the kernel
//       also reads as float4 through reinterpret_cast<float4*>(smem), so the
//       buffer's alignment matters.
//
// (a)-(c) only move bits; (d) sums integers stored as floats whose partial sums
// stay below 2^24, so every check is bit-exact.
#include <cuda_runtime.h>

#include <cmath>
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

#define DIM 4096        // matrix side for (a)-(c)
#define TILE 32         // shared tile side
#define BLOCK_ROWS 8    // rows of threads per block in the transpose
#define RED_THREADS 256                 // threads per reduction block
#define RED_ELEMS (RED_THREADS * 4)     // elements summed per reduction block
#define RED_N (1 << 24)                 // elements in the reduction input
#define ITERS 10        // timed launches per pattern, after one warm-up

enum Pattern { SEQUENTIAL = 0, TRANSPOSE = 1, RANDOM = 2, REDUCTION = 3 };

// (a) Copy through a shared tile, row-wise on both sides. Block TILE x TILE.
__global__ void sequential_copy(float* out, const float* in) {
  __shared__ float tile[TILE][TILE];
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y = blockIdx.y * TILE + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * DIM + x];
  __syncthreads();
  out[y * DIM + x] = tile[threadIdx.y][threadIdx.x];
}

// (b) Tiled transpose, unpadded tile (column reads: 32-way bank conflicts).
// Block TILE x BLOCK_ROWS.
__global__ void transpose_tiled(float* out, const float* in) {
  __shared__ float tile[TILE][TILE];  // unpadded: bank conflicts
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * DIM + x];
  __syncthreads();

  x = blockIdx.y * TILE + threadIdx.x;  // column in `out`
  y = blockIdx.x * TILE + threadIdx.y;  // row in `out`
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    out[(y + j) * DIM + x] = tile[threadIdx.x][threadIdx.y + j];
}

// (c) Each thread reads the tile element perm[its index in the tile].
// Block TILE x TILE.
__global__ void random_gather(float* out, const float* in, const int* perm) {
  __shared__ float tile[TILE][TILE];
  const int x = blockIdx.x * TILE + threadIdx.x;
  const int y = blockIdx.y * TILE + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * DIM + x];
  __syncthreads();
  const int p = perm[threadIdx.y * TILE + threadIdx.x];
  out[y * DIM + x] = tile[p / TILE][p % TILE];
}

// (d) Sum of RED_ELEMS elements per block in dynamic shared memory
// (RED_ELEMS * sizeof(float) bytes). Block RED_THREADS.
__global__ void block_sum(float* block_sums, const float* in) {
  extern __shared__ float smem[];
  const int tid = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * RED_ELEMS;
  for (int k = 0; k < 4; ++k)  // coalesced loads, scalar stores
    smem[tid + k * RED_THREADS] = in[base + tid + k * RED_THREADS];
  __syncthreads();
  const float4 v = reinterpret_cast<float4*>(smem)[tid];  // 16-byte LDS read
  const float partial = (v.x + v.y) + (v.z + v.w);
  __syncthreads();
  smem[tid] = partial;
  __syncthreads();
  for (int s = RED_THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) smem[tid] += smem[tid + s];
    __syncthreads();
  }
  if (tid == 0) block_sums[blockIdx.x] = smem[0];
}

struct Buffers {
  float* in;       // DIM x DIM
  float* out;      // DIM x DIM
  int* perm;       // TILE * TILE
  float* red_in;   // RED_N
  float* red_out;  // RED_N / RED_ELEMS
};

static void launch(int pattern, const Buffers& b) {
  const dim3 square(TILE, TILE);
  const dim3 rows(TILE, BLOCK_ROWS);
  const dim3 grid(DIM / TILE, DIM / TILE);
  switch (pattern) {
    case SEQUENTIAL: sequential_copy<<<grid, square>>>(b.out, b.in); break;
    case TRANSPOSE: transpose_tiled<<<grid, rows>>>(b.out, b.in); break;
    case RANDOM: random_gather<<<grid, square>>>(b.out, b.in, b.perm); break;
    default:
      block_sum<<<RED_N / RED_ELEMS, RED_THREADS, RED_ELEMS * sizeof(float)>>>(
          b.red_out, b.red_in);
      break;
  }
}

// One warm-up launch, then the best of ITERS launches, each timed with events.
static float best_ms(int pattern, const Buffers& b, cudaEvent_t start,
                     cudaEvent_t stop) {
  launch(pattern, b);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int it = 0; it < ITERS; ++it) {
    CHECK(cudaEventRecord(start));
    launch(pattern, b);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best) best = ms;
  }
  return best;
}

// Counts out[i] != ref[i]; reports the first few.
static long long count_errors(const std::vector<float>& out,
                              const std::vector<float>& ref, const char* name) {
  if (memcmp(out.data(), ref.data(), out.size() * sizeof(float)) == 0) return 0;
  long long errors = 0;
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
  const size_t count = (size_t)DIM * DIM;
  const size_t bytes = count * sizeof(float);
  const int red_blocks = RED_N / RED_ELEMS;

  // Inputs: integers, exact in fp32.
  std::vector<float> h_in(count), h_out(count), h_ref(count);
  for (size_t i = 0; i < count; ++i) h_in[i] = (float)(i % 65521);
  std::vector<float> h_red(RED_N);
  for (size_t i = 0; i < (size_t)RED_N; ++i)
    h_red[i] = (float)((i * 7u + (i >> 10)) % 251u);

  // Fixed pseudo-random permutation of 0..TILE*TILE-1 (Fisher-Yates, LCG).
  std::vector<int> h_perm(TILE * TILE);
  for (int i = 0; i < TILE * TILE; ++i) h_perm[i] = i;
  unsigned long long state = 12345ull;
  for (int i = TILE * TILE - 1; i > 0; --i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int j = (int)((state >> 33) % (unsigned long long)(i + 1));
    const int tmp = h_perm[i];
    h_perm[i] = h_perm[j];
    h_perm[j] = tmp;
  }

  Buffers b;
  CHECK(cudaMalloc(&b.in, bytes));
  CHECK(cudaMalloc(&b.out, bytes));
  CHECK(cudaMalloc(&b.perm, TILE * TILE * sizeof(int)));
  CHECK(cudaMalloc(&b.red_in, (size_t)RED_N * sizeof(float)));
  CHECK(cudaMalloc(&b.red_out, red_blocks * sizeof(float)));
  CHECK(cudaMemcpy(b.in, h_in.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b.perm, h_perm.data(), TILE * TILE * sizeof(int),
                   cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b.red_in, h_red.data(), (size_t)RED_N * sizeof(float),
                   cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  // (a) sequential: out == in.
  CHECK(cudaMemset(b.out, 0, bytes));
  const float sequential_ms = best_ms(SEQUENTIAL, b, start, stop);
  CHECK(cudaMemcpy(h_out.data(), b.out, bytes, cudaMemcpyDeviceToHost));
  const long long sequential_errors = count_errors(h_out, h_in, "sequential");

  // (b) transpose: out[c][r] == in[r][c].
  for (int r0 = 0; r0 < DIM; r0 += TILE)
    for (int c0 = 0; c0 < DIM; c0 += TILE)
      for (int r = r0; r < r0 + TILE; ++r)
        for (int c = c0; c < c0 + TILE; ++c)
          h_ref[(size_t)c * DIM + r] = h_in[(size_t)r * DIM + c];
  CHECK(cudaMemset(b.out, 0, bytes));
  const float transpose_ms = best_ms(TRANSPOSE, b, start, stop);
  CHECK(cudaMemcpy(h_out.data(), b.out, bytes, cudaMemcpyDeviceToHost));
  const long long transpose_errors = count_errors(h_out, h_ref, "transpose");

  // (c) random: element (r, c) of each tile is the tile's element perm[r*TILE+c].
  for (size_t r = 0; r < DIM; ++r)
    for (size_t c = 0; c < DIM; ++c) {
      const size_t p = (size_t)h_perm[(r % TILE) * TILE + (c % TILE)];
      h_ref[r * DIM + c] =
          h_in[(r - r % TILE + p / TILE) * DIM + (c - c % TILE + p % TILE)];
    }
  CHECK(cudaMemset(b.out, 0, bytes));
  const float random_ms = best_ms(RANDOM, b, start, stop);
  CHECK(cudaMemcpy(h_out.data(), b.out, bytes, cudaMemcpyDeviceToHost));
  const long long random_errors = count_errors(h_out, h_ref, "random");

  // (d) reduction: each block's sum, exactly; the total as an integer.
  CHECK(cudaMemset(b.red_out, 0, red_blocks * sizeof(float)));
  const float reduction_ms = best_ms(REDUCTION, b, start, stop);
  std::vector<float> h_sums(red_blocks);
  CHECK(cudaMemcpy(h_sums.data(), b.red_out, red_blocks * sizeof(float),
                   cudaMemcpyDeviceToHost));
  long long reduction_errors = 0;
  unsigned long long reduction_sum = 0;
  for (int blk = 0; blk < red_blocks; ++blk) {
    unsigned long long want = 0;
    for (size_t i = (size_t)blk * RED_ELEMS; i < (size_t)(blk + 1) * RED_ELEMS; ++i)
      want += (unsigned long long)h_red[i];
    const float got = h_sums[blk];
    if (got == (float)want) {
      reduction_sum += want;
    } else {
      if (reduction_errors < 5)
        fprintf(stderr, "reduction: block %d: got %g want %llu\n", blk, got, want);
      ++reduction_errors;
      if (std::isfinite(got) && got >= 0.0f) reduction_sum += (unsigned long long)got;
    }
  }

  const bool pass = sequential_errors == 0 && transpose_errors == 0 &&
                    random_errors == 0 && reduction_errors == 0;
  // Effective bandwidth: each element read once and written once ((a)-(c)),
  // or read once ((d)).
  const double gb = 2.0 * bytes / 1.0e9;
  const double red_gb = (double)RED_N * sizeof(float) / 1.0e9;
  printf("{\"program\":\"shared_memory\",\"dim\":%d,\"tile\":%d,"
         "\"reduction_n\":%d,\"reduction_blocks\":%d,\"iters\":%d,"
         "\"sequential_errors\":%lld,\"transpose_errors\":%lld,"
         "\"random_errors\":%lld,\"reduction_errors\":%lld,"
         "\"reduction_sum\":%llu,"
         "\"sequential_ms\":%.4f,\"transpose_ms\":%.4f,\"random_ms\":%.4f,"
         "\"reduction_ms\":%.4f,"
         "\"sequential_gb_per_s\":%.1f,\"transpose_gb_per_s\":%.1f,"
         "\"random_gb_per_s\":%.1f,\"reduction_gb_per_s\":%.1f,"
         "\"result\":\"%s\"}\n",
         DIM, TILE, RED_N, red_blocks, ITERS, sequential_errors,
         transpose_errors, random_errors, reduction_errors, reduction_sum,
         sequential_ms, transpose_ms, random_ms, reduction_ms,
         gb / (sequential_ms * 1e-3), gb / (transpose_ms * 1e-3),
         gb / (random_ms * 1e-3), red_gb / (reduction_ms * 1e-3),
         pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(b.in));
  CHECK(cudaFree(b.out));
  CHECK(cudaFree(b.perm));
  CHECK(cudaFree(b.red_in));
  CHECK(cudaFree(b.red_out));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
