// stream_pipeline.cu - overlapped copy/compute pipeline over 4 CUDA streams.
//
// Part of the rocmigrate demo/validation corpus. The input is split into
// NUM_CHUNKS chunks; chunk c goes to stream c % NUM_STREAMS and runs
//   cudaMemcpyAsync H2D -> kernel<<<g, b, 0, stream>>> -> cudaMemcpyAsync D2H
// from pinned host memory (cudaMallocHost), so copies of one chunk overlap the
// kernel of another. The same work is first run on a single stream for
// comparison.
//
// The kernel evaluates a cubic polynomial whose coefficients live in
// __constant__ memory, set with cudaMemcpyToSymbol (rewritten by the converter
// to hipMemcpyToSymbol(HIP_SYMBOL(...))). Unsigned arithmetic wraps modulo
// 2^32 identically on host and device, so the check is exact.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                         \
  do {                                                                      \
    cudaError_t err_ = (call);                                              \
    if (err_ != cudaSuccess) {                                              \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,      \
              __LINE__, cudaGetErrorString(err_));                          \
      exit(EXIT_FAILURE);                                                   \
    }                                                                       \
  } while (0)

#define NUM_STREAMS 4
#define NUM_CHUNKS 16

__constant__ unsigned int c_poly[4];  // c0 + c1*x + c2*x^2 + c3*x^3

__global__ void poly_eval(const unsigned int* in, unsigned int* out, int n,
                          int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned int x = in[i];
  for (int r = 0; r < rounds; ++r)  // a little extra work per element
    x = ((c_poly[3] * x + c_poly[2]) * x + c_poly[1]) * x + c_poly[0];
  out[i] = x;
}

static unsigned int poly_host(const unsigned int* c, unsigned int x,
                              int rounds) {
  for (int r = 0; r < rounds; ++r) x = ((c[3] * x + c[2]) * x + c[1]) * x + c[0];
  return x;
}

// Runs all chunks; chunk c is issued on streams[c % nstreams].
static void run_pipeline(cudaStream_t* streams, int nstreams,
                         unsigned int** d_in, unsigned int** d_out,
                         const unsigned int* h_in, unsigned int* h_out,
                         int chunk, int rounds) {
  const int block = 256;
  const int grid = (chunk + block - 1) / block;
  const size_t chunk_bytes = (size_t)chunk * sizeof(unsigned int);
  for (int c = 0; c < NUM_CHUNKS; ++c) {
    const int s = c % nstreams;
    const size_t off = (size_t)c * chunk;
    CHECK(cudaMemcpyAsync(d_in[s], h_in + off, chunk_bytes,
                          cudaMemcpyHostToDevice, streams[s]));
    poly_eval<<<grid, block, 0, streams[s]>>>(d_in[s], d_out[s], chunk, rounds);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h_out + off, d_out[s], chunk_bytes,
                          cudaMemcpyDeviceToHost, streams[s]));
  }
  for (int s = 0; s < nstreams; ++s) CHECK(cudaStreamSynchronize(streams[s]));
}

static int verify(const unsigned int* h_in, const unsigned int* h_out, int n,
                  const unsigned int* poly, int rounds) {
  int errors = 0;
  for (int i = 0; i < n; ++i) {
    unsigned int want = poly_host(poly, h_in[i], rounds);
    if (h_out[i] != want) {
      if (errors < 5)
        fprintf(stderr, "mismatch at %d: got %u want %u\n", i, h_out[i], want);
      ++errors;
    }
  }
  return errors;
}

int main() {
  const int n = 1 << 22;
  const int chunk = n / NUM_CHUNKS;
  const int rounds = 4;
  const size_t bytes = (size_t)n * sizeof(unsigned int);
  const unsigned int h_poly[4] = {7u, 3u, 2654435761u, 5u};

  CHECK(cudaMemcpyToSymbol(c_poly, h_poly, sizeof(h_poly)));

  unsigned int *h_in, *h_out;
  CHECK(cudaMallocHost(&h_in, bytes));
  CHECK(cudaMallocHost(&h_out, bytes));
  for (int i = 0; i < n; ++i) h_in[i] = (unsigned int)i * 2246822519u + 1u;

  cudaStream_t streams[NUM_STREAMS];
  unsigned int *d_in[NUM_STREAMS], *d_out[NUM_STREAMS];
  for (int s = 0; s < NUM_STREAMS; ++s) {
    CHECK(cudaStreamCreate(&streams[s]));
    CHECK(cudaMalloc(&d_in[s], (size_t)chunk * sizeof(unsigned int)));
    CHECK(cudaMalloc(&d_out[s], (size_t)chunk * sizeof(unsigned int)));
  }

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  // Warm-up (module load, first-touch of pinned pages), not timed.
  run_pipeline(streams, NUM_STREAMS, d_in, d_out, h_in, h_out, chunk, rounds);

  // 1 stream: copies and kernels serialize. Events on the legacy default
  // stream bracket all work on the blocking streams made by cudaStreamCreate.
  float serial_ms = 0.0f, pipelined_ms = 0.0f;
  for (int i = 0; i < n; ++i) h_out[i] = 0u;
  CHECK(cudaEventRecord(start, 0));
  run_pipeline(streams, 1, d_in, d_out, h_in, h_out, chunk, rounds);
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&serial_ms, start, stop));
  const int serial_errors = verify(h_in, h_out, n, h_poly, rounds);

  // NUM_STREAMS streams: chunks overlap.
  for (int i = 0; i < n; ++i) h_out[i] = 0u;
  CHECK(cudaEventRecord(start, 0));
  run_pipeline(streams, NUM_STREAMS, d_in, d_out, h_in, h_out, chunk, rounds);
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&pipelined_ms, start, stop));
  const int pipelined_errors = verify(h_in, h_out, n, h_poly, rounds);

  const bool pass = serial_errors == 0 && pipelined_errors == 0;
  printf("{\"program\":\"stream_pipeline\",\"n\":%d,\"chunks\":%d,"
         "\"streams\":%d,\"kernel_ms\":%.4f,\"serial_ms\":%.4f,"
         "\"pipelined_ms\":%.4f,\"speedup_x\":%.2f,\"errors\":%d,"
         "\"result\":\"%s\"}\n",
         n, NUM_CHUNKS, NUM_STREAMS, pipelined_ms, serial_ms, pipelined_ms,
         serial_ms / pipelined_ms, serial_errors + pipelined_errors,
         pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  for (int s = 0; s < NUM_STREAMS; ++s) {
    CHECK(cudaFree(d_in[s]));
    CHECK(cudaFree(d_out[s]));
    CHECK(cudaStreamDestroy(streams[s]));
  }
  CHECK(cudaFreeHost(h_in));
  CHECK(cudaFreeHost(h_out));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
