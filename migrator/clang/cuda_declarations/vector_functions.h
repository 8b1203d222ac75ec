/* rocmigrate's CUDA declarations: the make_ functions live in vector_types.h. */
#include "cuda_runtime.h"
