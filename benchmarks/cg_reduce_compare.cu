// GPU check of rocmigrate_cg_reduce.h (CGM002's support header) on NVIDIA: its collectives,
// built on the group's shuffles as HIP gets them, against CUDA's own cg::reduce,
// cg::inclusive_scan and cg::exclusive_scan, bit for bit, on random floats of mixed magnitudes
// (where the combining order shows in the last bits) and on integers. The header is included in
// a namespace of its own ("ours") over thin wrappers of CUDA's groups, which expose only what
// HIP's do (size, thread_rank, shfl, shfl_up, and shfl_xor on tiles).
//
// Expected: 0 differences: tiles of 2..32 threads reduce by CUDA's butterfly and scan by its
// shfl_up steps, coalesced groups reduce as their scan's last rank, or (32 lanes, a whole warp)
// by the butterfly, as CUDA's do. Built and run by benchmarks/cg_reduce_compare.sh.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

#include <cstdio>
#include <cstring>

namespace real = cooperative_groups;

namespace ours {

template <unsigned int N, class Parent = void>
struct thread_block_tile {
  real::thread_block_tile<N, real::thread_block> tile;
  __device__ unsigned int size() const { return N; }
  __device__ unsigned int thread_rank() const { return tile.thread_rank(); }
  template <class T> __device__ T shfl(T v, int rank) const { return tile.shfl(v, rank); }
  template <class T> __device__ T shfl_up(T v, unsigned int d) const { return tile.shfl_up(v, d); }
  template <class T> __device__ T shfl_xor(T v, unsigned int m) const { return tile.shfl_xor(v, m); }
};

struct coalesced_group {
  real::coalesced_group group;
  __device__ unsigned int size() const { return group.size(); }
  __device__ unsigned int thread_rank() const { return group.thread_rank(); }
  template <class T> __device__ T shfl(T v, int rank) const { return group.shfl(v, rank); }
  template <class T> __device__ T shfl_up(T v, unsigned int d) const { return group.shfl_up(v, d); }
};

}  // namespace ours

#define cooperative_groups ours
#define ROCMIGRATE_CG_REDUCE_FN __device__ inline
#include "rocmigrate_cg_reduce.h"
#undef cooperative_groups

enum Check { REDUCE_FLOAT, INCLUSIVE_FLOAT, EXCLUSIVE_FLOAT, REDUCE_INT, REDUCE_MIN, REDUCE_MAX,
             REDUCE_XOR, INCLUSIVE_INT, EXCLUSIVE_INT, CHECKS };
static const char* kCheckNames[CHECKS] = {
    "reduce plus float", "inclusive_scan plus float", "exclusive_scan plus float",
    "reduce plus int", "reduce less int", "reduce greater float", "reduce bit_xor unsigned",
    "inclusive_scan int", "exclusive_scan int"};
// groups: tiles of 2..32, then coalesced groups of 1..31 lanes and of 32
enum { GROUPS = 7, COALESCED_PART = 5, COALESCED_WHOLE = 6 };
static const char* kGroupNames[GROUPS] = {"tile 2", "tile 4", "tile 8", "tile 16", "tile 32",
                                          "coalesced <32", "coalesced 32"};

__device__ unsigned int hash(unsigned int x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return x;
}

__device__ float random_float(unsigned int seed) {  // mixed signs and magnitudes 2^-8..2^8
  const unsigned int h = hash(seed);
  const float unit = (h & 0xffffff) / 16777216.0f;
  return ldexpf(h & 0x80000000u ? -unit : unit, static_cast<int>((h >> 24) & 15) - 8);
}

__device__ bool same(float a, float b) { return __float_as_uint(a) == __float_as_uint(b); }
__device__ bool same(int a, int b) { return a == b; }
__device__ bool same(unsigned int a, unsigned int b) { return a == b; }

template <class Real, class Ours>
__device__ void compare(const Real& theirs, const Ours& mine, unsigned int seed,
                        unsigned long long* differences, unsigned long long* cases, int group) {
  const float f = random_float(seed);
  const int i = static_cast<int>(hash(seed ^ 0x9e3779b9u) % 2001u) - 1000;
  const unsigned int u = hash(seed + 7u);
  const bool results[CHECKS] = {
      same(real::reduce(theirs, f, real::plus<float>()), ours::reduce(mine, f, ours::plus<float>())),
      same(real::inclusive_scan(theirs, f, real::plus<float>()),
           ours::inclusive_scan(mine, f, ours::plus<float>())),
      same(real::exclusive_scan(theirs, f, real::plus<float>()),
           ours::exclusive_scan(mine, f, ours::plus<float>())),
      same(real::reduce(theirs, i, real::plus<int>()), ours::reduce(mine, i, ours::plus<int>())),
      same(real::reduce(theirs, i, real::less<int>()), ours::reduce(mine, i, ours::less<int>())),
      same(real::reduce(theirs, f, real::greater<float>()),
           ours::reduce(mine, f, ours::greater<float>())),
      same(real::reduce(theirs, u, real::bit_xor<unsigned int>()),
           ours::reduce(mine, u, ours::bit_xor<unsigned int>())),
      same(real::inclusive_scan(theirs, i), ours::inclusive_scan(mine, i)),
      same(real::exclusive_scan(theirs, i), ours::exclusive_scan(mine, i))};
  for (int c = 0; c < CHECKS; ++c) {
    if (!results[c]) atomicAdd(&differences[group * CHECKS + c], 1ull);
  }
  if (theirs.thread_rank() == 0) atomicAdd(&cases[group], 1ull);
}

template <unsigned int N>
__device__ void compare_tile(unsigned int seed, unsigned long long* differences,
                             unsigned long long* cases, int group) {
  auto tile = real::tiled_partition<N>(real::this_thread_block());
  compare(tile, ours::thread_block_tile<N>{tile}, seed, differences, cases, group);
}

__global__ void compare_all(int rounds, unsigned long long* differences,
                            unsigned long long* cases) {
  const unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned int lane = threadIdx.x % 32;
  for (int round = 0; round < rounds; ++round) {
    const unsigned int seed = hash(thread * 977u + round * 0x632be5abu);
    compare_tile<2>(seed, differences, cases, 0);
    compare_tile<4>(seed, differences, cases, 1);
    compare_tile<8>(seed, differences, cases, 2);
    compare_tile<16>(seed, differences, cases, 3);
    compare_tile<32>(seed, differences, cases, 4);
    // a random subset of the warp's lanes (never all of them), then the whole warp
    const unsigned int warp_seed = hash((thread / 32) * 31u + round * 0x2545f491u);
    unsigned int mask = hash(warp_seed) & hash(warp_seed + 1u) >> (warp_seed % 8);
    if (mask == 0xffffffffu || mask == 0u) mask = 1u << (warp_seed % 32);
    if ((mask >> lane) & 1u) {
      auto some = real::coalesced_threads();
      compare(some, ours::coalesced_group{some}, seed, differences, cases, COALESCED_PART);
    }
    __syncwarp();
    auto all = real::coalesced_threads();
    compare(all, ours::coalesced_group{all}, seed, differences, cases, COALESCED_WHOLE);
  }
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 64;
  const int blocks = 1024, threads = 256;
  unsigned long long *differences, *cases;
  cudaMalloc(&differences, sizeof(unsigned long long) * GROUPS * CHECKS);
  cudaMalloc(&cases, sizeof(unsigned long long) * GROUPS);
  cudaMemset(differences, 0, sizeof(unsigned long long) * GROUPS * CHECKS);
  cudaMemset(cases, 0, sizeof(unsigned long long) * GROUPS);
  compare_all<<<blocks, threads>>>(rounds, differences, cases);
  const cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(status));
    return 1;
  }
  unsigned long long host_differences[GROUPS * CHECKS], host_cases[GROUPS];
  cudaMemcpy(host_differences, differences, sizeof(host_differences), cudaMemcpyDeviceToHost);
  cudaMemcpy(host_cases, cases, sizeof(host_cases), cudaMemcpyDeviceToHost);
  std::printf("threads whose result differs from CUDA's (groups compared):\n");
  for (int g = 0; g < GROUPS; ++g) {
    std::printf("%-14s (%llu groups)", kGroupNames[g], host_cases[g]);
    for (int c = 0; c < CHECKS; ++c) {
      if (host_differences[g * CHECKS + c])
        std::printf("  %s: %llu", kCheckNames[c], host_differences[g * CHECKS + c]);
    }
    std::printf("\n");
  }
  unsigned long long unexpected = 0;
  for (int g = 0; g < GROUPS; ++g) {
    for (int c = 0; c < CHECKS; ++c) {
      unexpected += host_differences[g * CHECKS + c];
    }
  }
  std::printf(unexpected ? "DIFFERENCES\n" : "OK: every result is CUDA's, bit for bit\n");
  return unexpected ? 1 : 0;
}
