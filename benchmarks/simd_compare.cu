// Compares rocmigrate_simd.h with CUDA's own SIMD video intrinsics and integer dot products, on an
// NVIDIA GPU: every one of the 82 intrinsics and the int and unsigned forms of __dp4a, __dp2a_lo
// and __dp2a_hi are run on both sides for the same inputs and the results compared bit for bit.
// Built and run by benchmarks/simd_compare.sh (which renders the header with rocmigrate first).
//
// Inputs: two phases of 2^N pairs (N = argv[1], default 32). Pair i takes all 2^32 combinations
// of a 16-bit lane of a and the same lane of b (the low lanes in phase 0, the high lanes in phase
// 1): every pair of halfwords, and every pair of bytes in two byte positions; the other lanes
// come from a hash of i.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

// rocmigrate's definitions, in a namespace beside CUDA's (the header defines them whenever
// ROCMIGRATE_SIMD_FN is set, even under nvcc)
#define ROCMIGRATE_SIMD_FN static inline __device__
namespace port {
#include "rocmigrate_simd.h"
}

#define SIMD_UNARY(X) \
  X(__vabs2) X(__vabs4) X(__vabsss2) X(__vabsss4) X(__vneg2) X(__vneg4) X(__vnegss2) \
  X(__vnegss4)
#define SIMD_BINARY(X) \
  X(__vabsdiffs2) X(__vabsdiffs4) X(__vabsdiffu2) X(__vabsdiffu4) X(__vadd2) X(__vadd4) \
  X(__vaddss2) X(__vaddss4) X(__vaddus2) X(__vaddus4) X(__vavgs2) X(__vavgs4) X(__vavgu2) \
  X(__vavgu4) X(__vcmpeq2) X(__vcmpeq4) X(__vcmpges2) X(__vcmpges4) X(__vcmpgeu2) X(__vcmpgeu4) \
  X(__vcmpgts2) X(__vcmpgts4) X(__vcmpgtu2) X(__vcmpgtu4) X(__vcmples2) X(__vcmples4) \
  X(__vcmpleu2) X(__vcmpleu4) X(__vcmplts2) X(__vcmplts4) X(__vcmpltu2) X(__vcmpltu4) \
  X(__vcmpne2) X(__vcmpne4) X(__vhaddu2) X(__vhaddu4) X(__vmaxs2) X(__vmaxs4) X(__vmaxu2) \
  X(__vmaxu4) X(__vmins2) X(__vmins4) X(__vminu2) X(__vminu4) X(__vsads2) X(__vsads4) \
  X(__vsadu2) X(__vsadu4) X(__vseteq2) X(__vseteq4) X(__vsetges2) X(__vsetges4) X(__vsetgeu2) \
  X(__vsetgeu4) X(__vsetgts2) X(__vsetgts4) X(__vsetgtu2) X(__vsetgtu4) X(__vsetles2) \
  X(__vsetles4) X(__vsetleu2) X(__vsetleu4) X(__vsetlts2) X(__vsetlts4) X(__vsetltu2) \
  X(__vsetltu4) X(__vsetne2) X(__vsetne4) X(__vsub2) X(__vsub4) X(__vsubss2) X(__vsubss4) \
  X(__vsubus2) X(__vsubus4)
// the integer dot products (sm_61_intrinsics.h), each in its int and its unsigned int form: the
// third operand, the accumulator, comes from a hash of the pair's index
#define DOT_PRODUCTS(X) X(__dp4a) X(__dp2a_lo) X(__dp2a_hi)
#define COUNT_ONE(name) +1
#define COUNT_TWO(name) +2
constexpr int kFunctions = 0 SIMD_UNARY(COUNT_ONE) SIMD_BINARY(COUNT_ONE)
                           DOT_PRODUCTS(COUNT_TWO);

__device__ unsigned int mix(unsigned long long v) {  // splitmix64's finaliser
  v ^= v >> 30;
  v *= 0xbf58476d1ce4e5b9ull;
  v ^= v >> 27;
  v *= 0x94d049bb133111ebull;
  v ^= v >> 31;
  return static_cast<unsigned int>(v);
}

__device__ void record(int index, unsigned int a, unsigned int b, unsigned int cuda,
                       unsigned int ours, unsigned long long* mismatches, unsigned int* examples) {
  if (atomicAdd(&mismatches[index], 1ull) == 0) {
    unsigned int* example = examples + 4 * index;
    example[0] = a;
    example[1] = b;
    example[2] = cuda;
    example[3] = ours;
  }
}

__global__ void compare(int phase, unsigned long long count, unsigned long long* mismatches,
                        unsigned int* examples) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) +
                              threadIdx.x; i < count; i += stride) {
    const unsigned int lane_a = static_cast<unsigned int>(i) & 0xffffu;
    const unsigned int lane_b = static_cast<unsigned int>(i >> 16) & 0xffffu;
    const unsigned int other_a = mix(2 * i + phase), other_b = mix(2 * i + phase + 0x9e3779b9ull);
    const unsigned int a = phase == 0 ? (other_a & 0xffff0000u) | lane_a
                                      : (lane_a << 16) | (other_a & 0xffffu);
    const unsigned int b = phase == 0 ? (other_b & 0xffff0000u) | lane_b
                                      : (lane_b << 16) | (other_b & 0xffffu);
    int index = 0;
#define CHECK_UNARY(name)                                                   \
    {                                                                       \
      const unsigned int cuda = name(a), ours = port::name(a);              \
      if (cuda != ours) record(index, a, b, cuda, ours, mismatches, examples); \
      ++index;                                                              \
    }
#define CHECK_BINARY(name)                                                  \
    {                                                                       \
      const unsigned int cuda = name(a, b), ours = port::name(a, b);        \
      if (cuda != ours) record(index, a, b, cuda, ours, mismatches, examples); \
      ++index;                                                              \
    }
    SIMD_UNARY(CHECK_UNARY)
    SIMD_BINARY(CHECK_BINARY)
    const unsigned int c = mix(3 * i + phase + 0x632be59bull);
#define CHECK_DOT(name)                                                                   \
    {                                                                                     \
      const int s = static_cast<int>(a), t = static_cast<int>(b), u = static_cast<int>(c); \
      const unsigned int cuda = static_cast<unsigned int>(name(s, t, u));                 \
      const unsigned int ours = static_cast<unsigned int>(port::name(s, t, u));           \
      if (cuda != ours) record(index, a, b, cuda, ours, mismatches, examples);            \
      ++index;                                                                            \
      const unsigned int cuda_u = name(a, b, c), ours_u = port::name(a, b, c);            \
      if (cuda_u != ours_u) record(index, a, b, cuda_u, ours_u, mismatches, examples);    \
      ++index;                                                                            \
    }
    DOT_PRODUCTS(CHECK_DOT)
  }
}

#define NAME_OF(name) #name,
#define NAMES_OF_DOT(name) #name " (int)", #name " (unsigned)",
static const char* const kNames[] = {SIMD_UNARY(NAME_OF) SIMD_BINARY(NAME_OF)
                                     DOT_PRODUCTS(NAMES_OF_DOT)};

static void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(2);
  }
}

int main(int argc, char** argv) {
  const int log2_count = argc > 1 ? std::atoi(argv[1]) : 32;
  if (log2_count < 1 || log2_count > 32) {
    std::fprintf(stderr, "usage: %s [log2 of the pairs per phase, 1..32]\n", argv[0]);
    return 2;
  }
  const unsigned long long count = 1ull << log2_count;
  unsigned long long* mismatches;
  unsigned int* examples;
  check(cudaMalloc(&mismatches, kFunctions * sizeof(unsigned long long)), "cudaMalloc");
  check(cudaMalloc(&examples, 4 * kFunctions * sizeof(unsigned int)), "cudaMalloc");
  check(cudaMemset(mismatches, 0, kFunctions * sizeof(unsigned long long)), "cudaMemset");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int phase = 0; phase < 2; ++phase) {
    compare<<<4096, 256>>>(phase, count, mismatches, examples);
    check(cudaGetLastError(), "launch");
  }
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  unsigned long long found[kFunctions];
  unsigned int example[4 * kFunctions];
  check(cudaMemcpy(found, mismatches, sizeof found, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(example, examples, sizeof example, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaDeviceProp properties;
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  std::printf("%s, CUDA runtime %d: %d functions, 2 x 2^%d input pairs each, %.0f ms\n",
              properties.name, CUDART_VERSION, kFunctions, log2_count, ms);
  int wrong = 0;
  for (int k = 0; k < kFunctions; ++k) {
    if (found[k] == 0) continue;
    ++wrong;
    const unsigned int* e = example + 4 * k;
    std::printf("MISMATCH %-13s %llu inputs, e.g. a=0x%08x b=0x%08x: CUDA 0x%08x, "
                "rocmigrate_simd.h 0x%08x\n", kNames[k], found[k], e[0], e[1], e[2], e[3]);
  }
  if (wrong == 0) std::printf("ALL %d MATCH\n", kFunctions);
  else std::printf("%d of %d functions differ\n", wrong, kFunctions);
  return wrong == 0 ? 0 : 1;
}
