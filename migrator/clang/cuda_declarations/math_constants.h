/* rocmigrate's CUDA declarations: the floating-point constants of <math_constants.h> by their
 * CUDA names (infinities and NaNs as clang's builtins, the others as their decimal values). */
#ifndef ROCMIGRATE_MATH_CONSTANTS_H
#define ROCMIGRATE_MATH_CONSTANTS_H
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_MAX_NORMAL_F 3.40282347e+38F
#define CUDART_MIN_DENORM_F 1.40129846e-45F
#define CUDART_ZERO_F 0.0F
#define CUDART_ONE_F 1.0F
#define CUDART_SQRT_HALF_F 0.707106781F
#define CUDART_THIRD_F 0.333333333F
#define CUDART_PIO2_F 1.570796327F
#define CUDART_PI_F 3.141592654F
#define CUDART_L2E_F 1.442695041F
#define CUDART_LN2_F 0.693147181F
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN __builtin_nan("")
#define CUDART_PIO2 1.5707963267948966
#define CUDART_PI 3.1415926535897931
#define CUDART_2_OVER_PI 0.63661977236758138
#define CUDART_SQRT_2PI 2.5066282746310007
#endif
