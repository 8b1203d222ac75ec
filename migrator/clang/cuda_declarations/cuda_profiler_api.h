/* rocmigrate's CUDA declarations: the profiler control of the CUDA runtime API. */
#ifndef ROCMIGRATE_CUDA_PROFILER_API_H
#define ROCMIGRATE_CUDA_PROFILER_API_H
#include "cuda_runtime.h"
extern "C" {
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
}
#endif
