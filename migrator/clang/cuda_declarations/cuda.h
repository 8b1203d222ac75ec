/* rocmigrate's CUDA declarations: <cuda.h> as a kernel file uses it (the runtime's
 * declarations; no driver API). */
#ifndef ROCMIGRATE_CUDA_H
#define ROCMIGRATE_CUDA_H
#include "cuda_runtime.h"
#endif
