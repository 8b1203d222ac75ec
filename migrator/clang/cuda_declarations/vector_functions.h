/* rocmigrate's CUDA declarations: the make_ functions of the vector types live in cuda_runtime.h. */
#include "cuda_runtime.h"
