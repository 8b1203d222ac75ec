// atomics.cu - atomicAdd under contention, float / half / bf16 / mixed
// precision, checking that no update is lost.
//
// Part of the rocmigrate demo/validation corpus. OPS threads each do one
// atomicAdd into a small array of slots (slot = thread index % slots):
//   float: atomicAdd(float*, float) of 1.0f into FLOAT_SLOTS slots;
//   half:  atomicAdd(__half*, __half) of 1 into HALF_SLOTS slots;
//   bf16:  atomicAdd(__nv_bfloat16*, __nv_bfloat16) of 1 into BF16_SLOTS slots;
//   mixed: gradient accumulation, atomicAdd(&acc[slot], __float2half(grad)),
//          fp32 gradients in {0, 1, 2, 3} into a __half accumulator.
// Every partial sum is an integer that the type holds exactly (half: all
// integers up to 2048; bf16: up to 256), so the order of the additions does not
// matter and any difference from the expected sum is a lost update.
//
// Each kernel runs once as a warm-up and then REPS timed times (CUDA events);
// the slots are reset with cudaMemset before every run, outside the timed span,
// and every run is checked. The native half and bf16 atomicAdd need sm_70 and
// sm_80 or later.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
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

#define OPS (1 << 21)      // threads, one atomicAdd each, per kernel
#define FLOAT_SLOTS 1024   // 2048 adds of 1.0f per slot
#define HALF_SLOTS 1024    // 2048 adds of 1 per slot: half's largest exact run
#define BF16_SLOTS 8192    // 256 adds of 1 per slot: bf16's largest exact run
#define MIXED_SLOTS 4096   // 512 gradients in {0..3} per slot: sum <= 1536
#define BLOCK 256
#define REPS 5             // timed runs per kernel, after one warm-up

enum Kind { FLOAT_ADD = 0, HALF_ADD = 1, BF16_ADD = 2, MIXED_ADD = 3 };

// The gradient of thread tid in the mixed-precision kernel: 0, 1, 2 or 3.
__host__ __device__ inline float grad_value(int tid) {
  return (float)(((unsigned int)tid * 2654435761u) >> 30);
}

__global__ void add_float(float* slots, int n) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) atomicAdd(&slots[tid % FLOAT_SLOTS], 1.0f);
}

__global__ void add_half(__half* slots, int n) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const __half one = __float2half(1.0f);
  if (tid < n) atomicAdd(&slots[tid % HALF_SLOTS], one);
}

__global__ void add_bf16(__nv_bfloat16* slots, int n) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const __nv_bfloat16 one = __float2bfloat16(1.0f);
  if (tid < n) atomicAdd(&slots[tid % BF16_SLOTS], one);
}

// Mixed precision: fp32 gradients accumulated into a half accumulator.
__global__ void accumulate_mixed(__half* acc, const float* grads, int n) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) {
    const float grad = grads[tid];
    atomicAdd(&acc[tid % MIXED_SLOTS], __float2half(grad));
  }
}

struct Tally {
  long long lost;         // expected - actual, summed over slots (worst run)
  long long total;        // actual sum over slots (worst run)
  long long wrong_slots;  // slots != expected (worst run)
};

static int slot_count(int kind) {
  switch (kind) {
    case FLOAT_ADD: return FLOAT_SLOTS;
    case HALF_ADD: return HALF_SLOTS;
    case BF16_ADD: return BF16_SLOTS;
    default: return MIXED_SLOTS;
  }
}

static size_t slot_bytes(int kind) {
  return (size_t)slot_count(kind) * (kind == FLOAT_ADD ? sizeof(float) : 2);
}

static void launch(int kind, void* d_slots, const float* d_grads) {
  const int grid = (OPS + BLOCK - 1) / BLOCK;
  switch (kind) {
    case FLOAT_ADD: add_float<<<grid, BLOCK>>>((float*)d_slots, OPS); break;
    case HALF_ADD: add_half<<<grid, BLOCK>>>((__half*)d_slots, OPS); break;
    case BF16_ADD: add_bf16<<<grid, BLOCK>>>((__nv_bfloat16*)d_slots, OPS); break;
    default: accumulate_mixed<<<grid, BLOCK>>>((__half*)d_slots, d_grads, OPS); break;
  }
}

// Reads the slots back as floats.
static std::vector<float> read_slots(int kind, const void* d_slots) {
  const int slots = slot_count(kind);
  std::vector<float> values(slots);
  if (kind == FLOAT_ADD) {
    CHECK(cudaMemcpy(values.data(), d_slots, slots * sizeof(float),
                     cudaMemcpyDeviceToHost));
  } else if (kind == BF16_ADD) {
    std::vector<__nv_bfloat16> raw(slots);
    CHECK(cudaMemcpy(raw.data(), d_slots, slots * sizeof(__nv_bfloat16),
                     cudaMemcpyDeviceToHost));
    for (int s = 0; s < slots; ++s) values[s] = __bfloat162float(raw[s]);
  } else {
    std::vector<__half> raw(slots);
    CHECK(cudaMemcpy(raw.data(), d_slots, slots * sizeof(__half),
                     cudaMemcpyDeviceToHost));
    for (int s = 0; s < slots; ++s) values[s] = __half2float(raw[s]);
  }
  return values;
}

// Compares one run's slots with the expected sums.
static Tally tally(const std::vector<float>& values,
                   const std::vector<long long>& expected, const char* name) {
  Tally t = {0, 0, 0};
  for (size_t s = 0; s < values.size(); ++s) {
    const float v = values[s];
    const long long got =
        (std::isfinite(v) && std::fabs(v) < 1e15f) ? (long long)v : 0;
    t.total += got;
    t.lost += expected[s] - got;
    if (v != (float)expected[s]) {
      if (t.wrong_slots < 5)
        fprintf(stderr, "%s: slot %zu: got %g want %lld\n", name, s, v,
                expected[s]);
      ++t.wrong_slots;
    }
  }
  return t;
}

// Warm-up plus REPS timed runs; returns the best time, and the worst run's tally.
static float run_kind(int kind, void* d_slots, const float* d_grads,
                      const std::vector<long long>& expected, const char* name,
                      cudaEvent_t start, cudaEvent_t stop, Tally* worst) {
  float best = 1e30f;
  *worst = {0, 0, 0};
  bool first_tally = true;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    CHECK(cudaMemset(d_slots, 0, slot_bytes(kind)));
    CHECK(cudaEventRecord(start));
    launch(kind, d_slots, d_grads);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (rep > 0 && ms < best) best = ms;
    const Tally t = tally(read_slots(kind, d_slots), expected, name);
    if (first_tally || t.wrong_slots > worst->wrong_slots ||
        llabs(t.lost) > llabs(worst->lost)) {
      *worst = t;
      first_tally = false;
    }
  }
  return best;
}

int main() {
  // Expected per-slot sums.
  std::vector<long long> expected[4];
  for (int kind = 0; kind < 4; ++kind)
    expected[kind].assign(slot_count(kind), 0);
  for (int tid = 0; tid < OPS; ++tid) {
    expected[FLOAT_ADD][tid % FLOAT_SLOTS] += 1;
    expected[HALF_ADD][tid % HALF_SLOTS] += 1;
    expected[BF16_ADD][tid % BF16_SLOTS] += 1;
    expected[MIXED_ADD][tid % MIXED_SLOTS] += (long long)grad_value(tid);
  }

  std::vector<float> h_grads(OPS);
  for (int tid = 0; tid < OPS; ++tid) h_grads[tid] = grad_value(tid);

  void* d_slots;  // large enough for any kind's slots
  float* d_grads;
  CHECK(cudaMalloc(&d_slots, BF16_SLOTS * sizeof(float)));
  CHECK(cudaMalloc(&d_grads, OPS * sizeof(float)));
  CHECK(cudaMemcpy(d_grads, h_grads.data(), OPS * sizeof(float),
                   cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  const char* names[4] = {"float", "half", "bf16", "mixed"};
  float ms[4];
  Tally t[4];
  for (int kind = 0; kind < 4; ++kind)
    ms[kind] = run_kind(kind, d_slots, d_grads, expected[kind], names[kind],
                        start, stop, &t[kind]);

  bool pass = true;
  for (int kind = 0; kind < 4; ++kind)
    if (t[kind].lost != 0 || t[kind].wrong_slots != 0) pass = false;
  const long long wrong_slots =
      t[0].wrong_slots + t[1].wrong_slots + t[2].wrong_slots + t[3].wrong_slots;
  double mops[4];
  for (int kind = 0; kind < 4; ++kind) mops[kind] = OPS / (ms[kind] * 1e-3) / 1e6;

  printf("{\"program\":\"atomics\",\"ops\":%d,"
         "\"float_slots\":%d,\"half_slots\":%d,\"bf16_slots\":%d,"
         "\"mixed_slots\":%d,"
         "\"float_total\":%lld,\"half_total\":%lld,\"bf16_total\":%lld,"
         "\"mixed_total\":%lld,"
         "\"float_lost\":%lld,\"half_lost\":%lld,\"bf16_lost\":%lld,"
         "\"mixed_lost\":%lld,\"wrong_slots\":%lld,"
         "\"float_ms\":%.4f,\"half_ms\":%.4f,\"bf16_ms\":%.4f,\"mixed_ms\":%.4f,"
         "\"float_mops_per_s\":%.1f,\"half_mops_per_s\":%.1f,"
         "\"bf16_mops_per_s\":%.1f,\"mixed_mops_per_s\":%.1f,"
         "\"result\":\"%s\"}\n",
         OPS, FLOAT_SLOTS, HALF_SLOTS, BF16_SLOTS, MIXED_SLOTS, t[0].total,
         t[1].total, t[2].total, t[3].total, t[0].lost, t[1].lost, t[2].lost,
         t[3].lost, wrong_slots, ms[0], ms[1], ms[2], ms[3], mops[0], mops[1],
         mops[2], mops[3], pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(d_slots));
  CHECK(cudaFree(d_grads));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
