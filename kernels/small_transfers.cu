// small_transfers.cu - 4096 host->device copies of 1 KiB each vs. one copy.
//
// Part of the rocmigrate demo/validation corpus. per_copy_ms() copies COUNT
// items of ITEM_BYTES from a malloc'd (pageable) host buffer, one cudaMemcpy
// per item: each call pays the fixed cost of a synchronous pageable copy. The
// converter is expected to turn that host buffer into pinned memory.
// one_copy_pinned_ms() moves the same bytes from cudaMallocHost memory with a
// single cudaMemcpy: the reference.
//
// The bytes follow a fixed formula; main() zeroes the device buffer before each
// path and checks it afterwards, byte for byte. Each path runs once as a
// warm-up, then REPS (or PINNED_REPS) timed times; the best time is reported.
#include <cuda_runtime.h>

#include <chrono>
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

#define COUNT 4096
#define ITEM_BYTES 1024
#define REPS 5          // timed repetitions of the per-item copies
#define PINNED_REPS 20  // timed repetitions of the single copy (it is short)

struct Verify {
  unsigned long long checksum;    // sum of byte * ((index % 65536) + 1)
  unsigned long long mismatches;  // bytes that differ from the pattern
};

// Byte k of the data: varies within an item and from item to item.
static unsigned char pattern(size_t k) {
  return (unsigned char)((k * 131u + (k / ITEM_BYTES) * 7u + 11u) & 0xFFu);
}

static double elapsed_ms(std::chrono::steady_clock::time_point t0,
                         std::chrono::steady_clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// COUNT copies of ITEM_BYTES each from pageable host memory (the naive pattern).
static double per_copy_ms(char* d_dst) {
  char* host = (char*)malloc((size_t)COUNT * ITEM_BYTES);
  for (size_t i = 0; i < (size_t)COUNT * ITEM_BYTES; ++i) host[i] = (char)pattern(i);
  double best = 1e30;
  for (int rep = 0; rep <= REPS; ++rep) {  // rep 0 is the warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < COUNT; ++i) {
      CHECK(cudaMemcpy(d_dst + i * ITEM_BYTES, host + i * ITEM_BYTES, ITEM_BYTES, cudaMemcpyHostToDevice));
    }
    CHECK(cudaDeviceSynchronize());
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  free(host);
  return best;
}

// The same bytes in one cudaMemcpy from pinned host memory.
static double one_copy_pinned_ms(char* d_dst) {
  const size_t bytes = (size_t)COUNT * ITEM_BYTES;
  char* pinned;
  CHECK(cudaMallocHost(&pinned, bytes));
  for (size_t i = 0; i < bytes; ++i) pinned[i] = (char)pattern(i);
  double best = 1e30;
  for (int rep = 0; rep <= PINNED_REPS; ++rep) {  // rep 0 is the warm-up
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(cudaMemcpy(d_dst, pinned, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSynchronize());
    const auto t1 = std::chrono::steady_clock::now();
    if (rep > 0 && elapsed_ms(t0, t1) < best) best = elapsed_ms(t0, t1);
  }
  CHECK(cudaFreeHost(pinned));
  return best;
}

// Copies the device buffer back and checks every byte against the pattern.
static Verify verify_device(const char* d_dst, const char* name) {
  const size_t bytes = (size_t)COUNT * ITEM_BYTES;
  std::vector<unsigned char> back(bytes);
  CHECK(cudaMemcpy(back.data(), d_dst, bytes, cudaMemcpyDeviceToHost));
  Verify v = {0ull, 0ull};
  for (size_t k = 0; k < bytes; ++k) {
    v.checksum += (unsigned long long)back[k] * ((unsigned long long)(k & 0xFFFF) + 1ull);
    if (back[k] != pattern(k)) {
      if (v.mismatches < 5)
        fprintf(stderr, "%s: byte %zu (item %zu): got %u want %u\n", name, k,
                k / ITEM_BYTES, (unsigned)back[k], (unsigned)pattern(k));
      ++v.mismatches;
    }
  }
  return v;
}

int main() {
  const size_t bytes = (size_t)COUNT * ITEM_BYTES;
  char* d_dst;
  CHECK(cudaMalloc(&d_dst, bytes));

  CHECK(cudaMemset(d_dst, 0, bytes));
  const double per_ms = per_copy_ms(d_dst);
  const Verify per = verify_device(d_dst, "per-copy");

  CHECK(cudaMemset(d_dst, 0, bytes));
  const double one_ms = one_copy_pinned_ms(d_dst);
  const Verify one = verify_device(d_dst, "one pinned copy");

  const unsigned long long mismatches = per.mismatches + one.mismatches;
  const bool pass = mismatches == 0 && per.checksum == one.checksum;
  if (per.checksum != one.checksum)
    fprintf(stderr, "checksums differ: per-copy %llu, one pinned copy %llu\n",
            per.checksum, one.checksum);
  const double gb = (double)bytes / 1.0e9;
  printf("{\"program\":\"small_transfers\",\"copies\":%d,\"item_bytes\":%d,"
         "\"bytes\":%llu,\"checksum\":%llu,\"mismatches\":%llu,"
         "\"per_copy_ms\":%.4f,\"one_copy_pinned_ms\":%.4f,"
         "\"per_copy_gb_per_s\":%.3f,\"one_copy_pinned_gb_per_s\":%.2f,"
         "\"result\":\"%s\"}\n",
         COUNT, ITEM_BYTES, (unsigned long long)bytes, per.checksum, mismatches,
         per_ms, one_ms, gb / (per_ms * 1e-3), gb / (one_ms * 1e-3),
         pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaFree(d_dst));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
