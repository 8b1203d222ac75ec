/* rocmigrate's CUDA declarations: the built-in variables live in cuda_runtime.h. */
#include "cuda_runtime.h"
