// stream_tasks.cu - 100 independent ~1 ms tasks: the default stream vs. 8 streams,
// and 8 streams beside work on the null stream.
//
// Part of the rocmigrate demo/validation corpus. Each task is one launch of
// busy_task (1 block of 1 thread), which spins on clock64() for about 1 ms
// worth of cycles and then writes a known value into out[task]. The tasks do
// not depend on each other, so:
//   - on the null (default) stream they run one after another (~100 ms);
//   - spread over NUM_STREAMS streams made by cudaStreamCreate, task t on
//     streams[t % NUM_STREAMS], up to NUM_STREAMS run at once (~13 ms).
//
// run_streams() never touches the null stream: every launch names a stream and
// the only synchronisation is cudaDeviceSynchronize. The converter may therefore
// turn its cudaStreamCreate into a non-blocking stream without changing what
// the program computes.
//
// The third mode is the one where that rewrite changes the time: another part
// of the program (start_background) has put one long task on the null stream
// (as long as the streamed tasks take together, NUM_TASKS / NUM_STREAMS ms)
// just before run_streams. Streams made by cudaStreamCreate are blocking: their
// tasks wait for the null stream's task to finish (~26 ms in all). Non-blocking
// streams run beside it (~13 ms). The tasks do not read what the background
// task writes, so both orders compute the same results. main() resets and checks `out` (cudaMemset/cudaMemcpy)
// outside the timed functions, and synchronises after the reset.
//
// The 1 ms is calibrated from the SM clock rate (cudaDevAttrClockRate, in kHz,
// so khz cycles take 1 ms at that clock). Timings use std::chrono around the
// launches plus cudaDeviceSynchronize; each mode runs once as a warm-up, then
// REPS timed times, and the best (minimum) time is reported.
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

#define NUM_TASKS 100
#define NUM_STREAMS 8
#define TASK_MS 1  // target duration of one task
#define REPS 5     // timed repetitions of each mode, after one warm-up

// The value task `task` writes when it finishes (never 0 for 0 <= task < 100,
// so a reset buffer of zeros shows which tasks did not run).
__host__ __device__ inline unsigned int task_value(int task) {
  return (unsigned int)task * 2654435761u + 0x9E3779B9u;
}

// Spins for `cycles` SM clock cycles, then records that the task completed.
__global__ void busy_task(unsigned int* out, int task, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  out[task] = task_value(task);
}

static double elapsed_ms(std::chrono::steady_clock::time_point t0,
                         std::chrono::steady_clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// All tasks on the null stream: they serialize.
static double run_default_stream(unsigned int* d_out, long long cycles) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < NUM_TASKS; ++t) busy_task<<<1, 1>>>(d_out, t, cycles);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const auto t1 = std::chrono::steady_clock::now();
  return elapsed_ms(t0, t1);
}

// Task t on streams[t % NUM_STREAMS]: up to NUM_STREAMS tasks run at once.
// Uses no null-stream operation (only stream launches, cudaDeviceSynchronize).
static double run_streams(unsigned int* d_out, long long cycles) {
  cudaStream_t streams[NUM_STREAMS];
  for (int i = 0; i < NUM_STREAMS; ++i) CHECK(cudaStreamCreate(&streams[i]));

  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < NUM_TASKS; ++t)
    busy_task<<<1, 1, 0, streams[t % NUM_STREAMS]>>>(d_out, t, cycles);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const auto t1 = std::chrono::steady_clock::now();

  for (int i = 0; i < NUM_STREAMS; ++i) CHECK(cudaStreamDestroy(streams[i]));
  return elapsed_ms(t0, t1);
}

// Work another part of the program puts on the null stream: one task that
// spins as long as the streamed tasks take together, writing background[0].
static void start_background(unsigned int* d_background, long long cycles) {
  busy_task<<<1, 1>>>(d_background, 0, cycles * (NUM_TASKS / NUM_STREAMS));
  CHECK(cudaGetLastError());
}

// run_streams while the null stream is busy with start_background's task.
static double run_alongside_default(unsigned int* d_out, unsigned int* d_background,
                                    long long cycles) {
  const auto t0 = std::chrono::steady_clock::now();
  start_background(d_background, cycles);
  run_streams(d_out, cycles);
  const auto t1 = std::chrono::steady_clock::now();
  return elapsed_ms(t0, t1);
}

// Zeroes out[] and waits for it, so no task of the next run can race the reset.
static void reset_out(unsigned int* d_out) {
  CHECK(cudaMemset(d_out, 0, NUM_TASKS * sizeof(unsigned int)));
  CHECK(cudaDeviceSynchronize());
}

// Number of tasks whose out[] value is right.
static int count_completed(const unsigned int* d_out, const char* mode) {
  std::vector<unsigned int> h_out(NUM_TASKS);
  CHECK(cudaMemcpy(h_out.data(), d_out, NUM_TASKS * sizeof(unsigned int),
                   cudaMemcpyDeviceToHost));
  int completed = 0, reported = 0;
  for (int t = 0; t < NUM_TASKS; ++t) {
    if (h_out[t] == task_value(t)) {
      ++completed;
    } else if (reported < 5) {
      fprintf(stderr, "%s: task %d wrote %u, want %u\n", mode, t, h_out[t],
              task_value(t));
      ++reported;
    }
  }
  return completed;
}

int main() {
  int dev = 0, khz = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  const long long cycles = (long long)khz * TASK_MS;  // kHz = cycles per ms

  unsigned int* d_out;
  unsigned int* d_background;
  CHECK(cudaMalloc(&d_out, NUM_TASKS * sizeof(unsigned int)));
  CHECK(cudaMalloc(&d_background, sizeof(unsigned int)));

  // Run 0 of each mode is the warm-up; runs 1..REPS are timed. Every run is
  // checked; `completed_*` is the worst run's count.
  double default_ms = 1e30, streams_ms = 1e30;
  int completed_default = NUM_TASKS, completed_streams = NUM_TASKS;
  for (int rep = 0; rep <= REPS; ++rep) {
    reset_out(d_out);
    const double ms = run_default_stream(d_out, cycles);
    const int done = count_completed(d_out, "default stream");
    if (done < completed_default) completed_default = done;
    if (rep > 0 && ms < default_ms) default_ms = ms;
  }
  for (int rep = 0; rep <= REPS; ++rep) {
    reset_out(d_out);
    const double ms = run_streams(d_out, cycles);
    const int done = count_completed(d_out, "streams");
    if (done < completed_streams) completed_streams = done;
    if (rep > 0 && ms < streams_ms) streams_ms = ms;
  }

  double alongside_ms = 1e30;
  int completed_alongside = NUM_TASKS;
  bool background_done = true;
  for (int rep = 0; rep <= REPS; ++rep) {
    reset_out(d_out);
    CHECK(cudaMemset(d_background, 0, sizeof(unsigned int)));
    CHECK(cudaDeviceSynchronize());
    const double ms = run_alongside_default(d_out, d_background, cycles);
    const int done = count_completed(d_out, "streams beside the null stream");
    unsigned int background = 0;
    CHECK(cudaMemcpy(&background, d_background, sizeof(unsigned int),
                     cudaMemcpyDeviceToHost));
    background_done = background_done && background == task_value(0);
    if (done < completed_alongside) completed_alongside = done;
    if (rep > 0 && ms < alongside_ms) alongside_ms = ms;
  }

  int completed =
      completed_default < completed_streams ? completed_default : completed_streams;
  if (completed_alongside < completed) completed = completed_alongside;
  const bool pass = completed_default == NUM_TASKS && completed_streams == NUM_TASKS &&
                    completed_alongside == NUM_TASKS && background_done;
  printf("{\"program\":\"stream_tasks\",\"tasks\":%d,\"streams\":%d,"
         "\"completed\":%d,\"completed_default\":%d,\"completed_streams\":%d,"
         "\"completed_alongside\":%d,\"background_done\":%d,"
         "\"default_stream_ms\":%.3f,\"streams_8_ms\":%.3f,\"speedup_x\":%.2f,"
         "\"alongside_default_ms\":%.3f,\"result\":\"%s\"}\n",
         NUM_TASKS, NUM_STREAMS, completed, completed_default, completed_streams,
         completed_alongside, background_done ? 1 : 0, default_ms,
         streams_ms, default_ms / streams_ms, alongside_ms, pass ? "PASS" : "FAIL");
  printf("%s\n", pass ? "PASS" : "FAIL");

  CHECK(cudaFree(d_background));
  CHECK(cudaFree(d_out));
  return pass ? EXIT_SUCCESS : EXIT_FAILURE;
}
