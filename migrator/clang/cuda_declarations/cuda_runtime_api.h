/* rocmigrate's CUDA declarations: the runtime API lives in cuda_runtime.h. */
#include "cuda_runtime.h"
