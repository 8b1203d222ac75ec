// peer_exchange.cu - BERT-large gradients exchanged between two GPUs: one peer
// copy per tensor, one device-to-device copy of the whole bucket, and an
// all-reduce through NCCL where it is available.
//
// Part of the rocmigrate demo/validation corpus. Needs two GPUs (devices 0 and
// 1); with fewer it prints {"program":"peer_exchange","devices":N,
// "result":"SKIP"}, then SKIP, and exits with 0: a harness treats that as not
// run.
//
// The model's 391 gradient tensors (335,141,888 fp32 values, 1.34 GB) are built
// from BERT-large's shapes, as in gradient_transfer.cu: embeddings (word
// 30522x1024, position 512x1024, token type 2x1024, LayerNorm gamma and beta),
// 24 encoder layers of 16 tensors each (Q, K, V and attention output 1024x1024
// + bias, attention LayerNorm, intermediate 1024x4096 + bias, output 4096x1024
// + bias, output LayerNorm) and the pooler (1024x1024 + bias). Each GPU holds
// them in ONE contiguous buffer (a flat gradient bucket); tensor t starts at
// offsets[t]. Element i of tensor t on GPU g is (t * 131 + i + g * 7) % 1021,
// an integer below 2^24, so it is exact in fp32, and so is the sum of both
// GPUs' values (below 2048): every check is bit-exact.
//
// Phase 1 (peer copies): peer_copy_ms() copies every tensor of one GPU's bucket
// into a receive buffer on the other GPU with one cudaMemcpyPeerAsync per
// tensor on a stream of the source GPU, then waits for the stream; once 0 -> 1
// and once 1 -> 0. d2d_one_copy_ms() copies the whole bucket from GPU 0 to GPU
// 1 with a single cudaMemcpy(..., cudaMemcpyDeviceToDevice) between buffers
// allocated on the two devices in the same function (unified addressing works
// out the devices; the converter is expected to name them with the peer-copy
// API).
//
// Phase 2 (all-reduce, only when built with -DPEER_EXCHANGE_NCCL, and the NCCL
// library linked, on a machine where <nccl.h> is found: a header in the include
// path does not mean the library is linked, so finding it is not enough):
// allreduce_ms() sums both buckets in place with ncclAllReduce (one group of
// two calls, one per GPU, each on a stream of its GPU). NVLink SHARP
// (multicast) stays off: NCCL_NVLS_ENABLE is set to 0 unless the environment
// already sets it, and nothing here calls the multicast API.
//
// Every path runs once as a warm-up and then REPS times (std::chrono around
// issuing the work and waiting for it); the best (minimum) time is reported.
// Receive buffers are set to NaN bytes and buckets re-filled before each run,
// outside the timed span. The checks run on the GPU that holds the data (a
// per-tensor kernel), after the timed runs.
#include <cuda_runtime.h>

#if defined(PEER_EXCHANGE_NCCL) && __has_include(<nccl.h>)  // C++17
#include <nccl.h>
#define HAVE_NCCL 1
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

#ifdef HAVE_NCCL
#define NCCLCHECK(call)                                                     \
  do {                                                                      \
    ncclResult_t res_ = (call);                                             \
    if (res_ != ncclSuccess) {                                              \
      fprintf(stderr, "NCCL error %s at %s:%d: %s\n", #call, __FILE__,      \
              __LINE__, ncclGetErrorString(res_));                          \
      exit(EXIT_FAILURE);                                                   \
    }                                                                       \
  } while (0)
#endif

#define GPUS 2          // devices 0 and 1 take part
#define REPS 3          // timed repetitions of each path, after one warm-up
#define VERIFY_THREADS 256

struct Verify {
  unsigned long long checksum;    // sum of the values, read as integers
  unsigned long long mismatches;  // elements that differ from the expected value
};

// Element i of tensor t on GPU g (t < 391, i < 2^25, g < 2: fits 32 bits).
__host__ __device__ inline unsigned int grad_value(int tensor, size_t i, int gpu) {
  return ((unsigned int)tensor * 131u + (unsigned int)i + (unsigned int)gpu * 7u) % 1021u;
}

// The expected value after summing GPUs first .. first + gpus - 1.
__host__ __device__ inline unsigned int expected_value(int tensor, size_t i, int first,
                                                       int gpus) {
  unsigned int sum = 0u;
  for (int g = first; g < first + gpus; ++g) sum += grad_value(tensor, i, g);
  return sum;
}

__global__ void fill_grad(float* g, size_t count, int tensor, int gpu) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += stride)
    g[i] = (float)grad_value(tensor, i, gpu);
}

// Checks one tensor against the sum of GPUs first .. first + gpus - 1. Adds the
// tensor's checksum to stats[0] and its mismatches to stats[1]. A value that
// matches adds the expected integer; one that does not adds its bit pattern.
__global__ void verify_grad(const float* g, size_t count, int tensor, int first,
                            int gpus, unsigned long long* stats) {
  __shared__ unsigned long long sums[VERIFY_THREADS];
  __shared__ unsigned long long bad[VERIFY_THREADS];
  unsigned long long sum = 0ull, wrong = 0ull;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const unsigned int want = expected_value(tensor, i, first, gpus);
    const float got = g[i];
    if (got == (float)want) {
      sum += want;
    } else {
      sum += __float_as_uint(got);
      ++wrong;
    }
  }
  sums[threadIdx.x] = sum;
  bad[threadIdx.x] = wrong;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      sums[threadIdx.x] += sums[threadIdx.x + s];
      bad[threadIdx.x] += bad[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(&stats[0], sums[0]);
    atomicAdd(&stats[1], bad[0]);
  }
}

static int grid_for(size_t count) {
  const size_t blocks_needed = (count + 255) / 256;
  return blocks_needed < 4096 ? (int)blocks_needed : 4096;
}

// Fills device `gpu`'s bucket with that GPU's values and waits for it.
static void fill_bucket(int gpu, float* bucket, const size_t* counts,
                        const size_t* offsets, int n) {
  CHECK(cudaSetDevice(gpu));
  for (int t = 0; t < n; ++t)
    fill_grad<<<grid_for(counts[t]), 256>>>(bucket + offsets[t], counts[t], t, gpu);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
}

// Sets every byte of a buffer on `device` to 0xFF (NaN) and waits for it, so a
// copy that does not arrive cannot pass the check.
static void poison(int device, float* buffer, size_t bytes) {
  CHECK(cudaSetDevice(device));
  CHECK(cudaMemset(buffer, 0xFF, bytes));
  CHECK(cudaDeviceSynchronize());
}

static void wait_device(int device) {
  CHECK(cudaSetDevice(device));
  CHECK(cudaDeviceSynchronize());
}

// Checks a bucket on `device` against the sum of GPUs first .. first + gpus - 1,
// one kernel per tensor; prints the first mismatches (at most 5) to stderr.
static Verify verify_bucket(int device, const float* bucket, const size_t* counts,
                            const size_t* offsets, int n, int first, int gpus,
                            const char* name) {
  CHECK(cudaSetDevice(device));
  unsigned long long* d_stats;
  const size_t stats_bytes = (size_t)n * 2 * sizeof(unsigned long long);
  CHECK(cudaMalloc(&d_stats, stats_bytes));
  CHECK(cudaMemset(d_stats, 0, stats_bytes));
  for (int t = 0; t < n; ++t)
    verify_grad<<<grid_for(counts[t]), VERIFY_THREADS>>>(
        bucket + offsets[t], counts[t], t, first, gpus, d_stats + 2 * t);
  CHECK(cudaGetLastError());
  std::vector<unsigned long long> stats((size_t)n * 2);
  CHECK(cudaMemcpy(stats.data(), d_stats, stats_bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d_stats));

  Verify v = {0ull, 0ull};
  int reported = 0;
  for (int t = 0; t < n; ++t) {
    v.checksum += stats[2 * t];
    v.mismatches += stats[2 * t + 1];
    if (stats[2 * t + 1] == 0ull || reported >= 5) continue;
    std::vector<float> host(counts[t]);
    CHECK(cudaMemcpy(host.data(), bucket + offsets[t], counts[t] * sizeof(float),
                     cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < counts[t] && reported < 5; ++i) {
      const unsigned int want = expected_value(t, i, first, gpus);
      if (host[i] != (float)want) {
        fprintf(stderr, "%s: tensor %d element %zu: got %g want %u\n", name, t,
                i, host[i], want);
        ++reported;
      }
    }
  }
  return v;
}

static double elapsed_ms(std::chrono::steady_clock::time_point t0,
                         std::chrono::steady_clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// Enables access from `device` to `peer`'s memory; already enabled is fine.
static void enable_peer(int device, int peer) {
  CHECK(cudaSetDevice(device));
  const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // clear it
  } else {
    CHECK(err);
  }
}

// Copies every tensor of `src` (on src_dev) into `dst` (on dst_dev): one
// cudaMemcpyPeerAsync per tensor on `stream`, a stream of src_dev, then waits.
static double peer_copy_ms(float* dst, int dst_dev, const float* src, int src_dev,
                           const size_t* counts, const size_t* offsets, int n,
                           size_t bytes, cudaStream_t stream) {
  double best = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    poison(dst_dev, dst, bytes);
    CHECK(cudaSetDevice(src_dev));
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < n; ++t)
      CHECK(cudaMemcpyPeerAsync(dst + offsets[t], dst_dev, src + offsets[t], src_dev,
                                counts[t] * sizeof(float), stream));
    CHECK(cudaStreamSynchronize(stream));
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  return best;
}

// One cudaMemcpy of GPU 0's whole bucket into a buffer on GPU 1. A
// device-to-device copy is asynchronous to the host, so both devices are waited
// for inside the timed span.
static double d2d_one_copy_ms(const size_t* counts, const size_t* offsets, int n,
                              size_t total, Verify* result) {
  const size_t bytes = total * sizeof(float);
  float* src;
  float* dst;
  CHECK(cudaSetDevice(0));
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaSetDevice(1));
  CHECK(cudaMalloc(&dst, bytes));
  fill_bucket(0, src, counts, offsets, n);
  double best = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    poison(1, dst, bytes);
    CHECK(cudaSetDevice(0));
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    wait_device(1);
    wait_device(0);
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  *result = verify_bucket(1, dst, counts, offsets, n, 0, 1, "one d2d copy");
  CHECK(cudaSetDevice(1));
  CHECK(cudaFree(dst));
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(src));
  return best;
}

#ifdef HAVE_NCCL
// In-place sum of both buckets with ncclAllReduce; each bucket is re-filled
// with its GPU's values before every run. Checks both buckets afterwards.
static double allreduce_ms(float* const* buckets, const cudaStream_t* streams,
                           const size_t* counts, const size_t* offsets, int n,
                           size_t total, Verify* result) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // no NVLink SHARP, unless set already
  ncclComm_t comms[GPUS];
  int devs[GPUS] = {0, 1};
  NCCLCHECK(ncclCommInitAll(comms, GPUS, devs));
  double best = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    for (int g = 0; g < GPUS; ++g) fill_bucket(g, buckets[g], counts, offsets, n);
    const auto t0 = std::chrono::steady_clock::now();
    NCCLCHECK(ncclGroupStart());
    for (int g = 0; g < GPUS; ++g)
      NCCLCHECK(ncclAllReduce(buckets[g], buckets[g], total, ncclFloat, ncclSum,
                              comms[g], streams[g]));
    NCCLCHECK(ncclGroupEnd());
    for (int g = 0; g < GPUS; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaStreamSynchronize(streams[g]));
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  Verify v = {0ull, 0ull};
  for (int g = 0; g < GPUS; ++g) {
    const Verify vg = verify_bucket(g, buckets[g], counts, offsets, n, 0, GPUS,
                                    g == 0 ? "all-reduce GPU 0" : "all-reduce GPU 1");
    v.checksum += vg.checksum;
    v.mismatches += vg.mismatches;
  }
  *result = v;
  for (int g = 0; g < GPUS; ++g) NCCLCHECK(ncclCommDestroy(comms[g]));
  return best;
}
#endif

int main() {
  int devices = 0;
  const cudaError_t count_err = cudaGetDeviceCount(&devices);
  if (count_err == cudaErrorNoDevice) {
    (void)cudaGetLastError();
    devices = 0;
  } else {
    CHECK(count_err);
  }
  if (devices < GPUS) {
    printf("{\"program\":\"peer_exchange\",\"devices\":%d,\"result\":\"SKIP\"}\n",
           devices);
    printf("SKIP\n");
    return EXIT_SUCCESS;
  }

  const std::vector<size_t> counts = bert_large_shapes();
  const int n = (int)counts.size();
  std::vector<size_t> offsets(n);
  size_t total = 0;
  for (int t = 0; t < n; ++t) {
    offsets[t] = total;
    total += counts[t];
  }
  const size_t bytes = total * sizeof(float);

  // Peer access both ways where the devices allow it (copies work without it,
  // staged by the driver).
  int can01 = 0, can10 = 0;
  CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
  CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
  if (can01) enable_peer(0, 1);
  if (can10) enable_peer(1, 0);
  const int peer_access = can01 && can10 ? 1 : 0;

  // On each GPU: its bucket, a receive buffer and a stream.
  float* buckets[GPUS];
  float* received[GPUS];
  cudaStream_t streams[GPUS];
  for (int g = 0; g < GPUS; ++g) {
    CHECK(cudaSetDevice(g));
    CHECK(cudaMalloc(&buckets[g], bytes));
    CHECK(cudaMalloc(&received[g], bytes));
    CHECK(cudaStreamCreate(&streams[g]));
    fill_bucket(g, buckets[g], counts.data(), offsets.data(), n);
  }

  // Phase 1: one peer copy per tensor, each way; then one copy of the bucket.
  const double ms_01 = peer_copy_ms(received[1], 1, buckets[0], 0, counts.data(),
                                    offsets.data(), n, bytes, streams[0]);
  const double ms_10 = peer_copy_ms(received[0], 0, buckets[1], 1, counts.data(),
                                    offsets.data(), n, bytes, streams[1]);
  const Verify recv_01 = verify_bucket(1, received[1], counts.data(), offsets.data(),
                                       n, 0, 1, "peer copy 0->1");
  const Verify recv_10 = verify_bucket(0, received[0], counts.data(), offsets.data(),
                                       n, 1, 1, "peer copy 1->0");
  const unsigned long long peer_checksum = recv_01.checksum + recv_10.checksum;
  const unsigned long long peer_mismatches = recv_01.mismatches + recv_10.mismatches;
  const double peer_ms = ms_01 < ms_10 ? ms_01 : ms_10;

  Verify d2d = {0ull, 0ull};
  const double d2d_ms = d2d_one_copy_ms(counts.data(), offsets.data(), n, total, &d2d);
  if (d2d.checksum != recv_01.checksum)
    fprintf(stderr, "checksums differ: peer copies 0->1 %llu, one d2d copy %llu\n",
            recv_01.checksum, d2d.checksum);
  bool pass = peer_mismatches == 0 && d2d.mismatches == 0 &&
              d2d.checksum == recv_01.checksum;

  const double gb = (double)bytes / 1.0e9;
  char nccl_fields[256];
#ifdef HAVE_NCCL
  // Phase 2: all-reduce of the two buckets (overwrites them: runs last).
  Verify reduced = {0ull, 0ull};
  const double ar_ms = allreduce_ms(buckets, streams, counts.data(), offsets.data(),
                                    n, total, &reduced);
  pass = pass && reduced.mismatches == 0;
  const double bus_factor = 2.0 * (GPUS - 1) / GPUS;  // all-reduce bus bandwidth
  snprintf(nccl_fields, sizeof(nccl_fields),
           "\"nccl\":1,\"allreduce_checksum\":%llu,\"allreduce_mismatches\":%llu,"
           "\"allreduce_ms\":%.3f,\"allreduce_gb_per_s\":%.2f,",
           reduced.checksum, reduced.mismatches, ar_ms,
           bus_factor * gb / (ar_ms * 1e-3));
#else
  snprintf(nccl_fields, sizeof(nccl_fields), "\"nccl\":0,");
#endif
  printf("{\"program\":\"peer_exchange\",\"devices\":%d,\"peer_access\":%d,"
         "\"tensors\":%d,\"parameters\":%llu,\"bytes\":%llu,"
         "\"peer_checksum\":%llu,\"peer_mismatches\":%llu,\"d2d_mismatches\":%llu,"
         "%s\"peer_copy_ms\":%.3f,\"peer_copy_0to1_ms\":%.3f,"
         "\"peer_copy_1to0_ms\":%.3f,\"d2d_one_copy_ms\":%.3f,"
         "\"peer_copy_gb_per_s\":%.2f,\"d2d_one_copy_gb_per_s\":%.2f,"
         "\"result\":\"%s\"}\n",
         devices, peer_access, n, (unsigned long long)total,
         (unsigned long long)bytes, peer_checksum, peer_mismatches, d2d.mismatches,
         nccl_fields, peer_ms, ms_01, ms_10, d2d_ms, gb / (peer_ms * 1e-3),
         gb / (d2d_ms * 1e-3), pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  for (int g = 0; g < GPUS; ++g) {
    CHECK(cudaSetDevice(g));
    CHECK(cudaStreamDestroy(streams[g]));
    CHECK(cudaFree(received[g]));
    CHECK(cudaFree(buckets[g]));
  }
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
