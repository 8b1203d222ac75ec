/* rocmigrate's CUDA declarations: the C and C++ math library on the device side, by the names
 * the CUDA math API documents (float and double forms, and the float overloads of the C++
 * names). The C library's host declarations stay as they are: clang picks a declaration by
 * the side of the caller, so a kernel's sqrtf is this one. Declarations only. */
#ifndef ROCMIGRATE_DEVICE_MATH_H
#define ROCMIGRATE_DEVICE_MATH_H

#define ROCMIGRATE_D __attribute__((device))
#define ROCMIGRATE_MATH1(name) ROCMIGRATE_D double name(double x); \
  ROCMIGRATE_D float name##f(float x); ROCMIGRATE_D float name(float x);
#define ROCMIGRATE_MATH2(name) ROCMIGRATE_D double name(double x, double y); \
  ROCMIGRATE_D float name##f(float x, float y); ROCMIGRATE_D float name(float x, float y);

ROCMIGRATE_MATH1(acos) ROCMIGRATE_MATH1(acosh) ROCMIGRATE_MATH1(asin) ROCMIGRATE_MATH1(asinh)
ROCMIGRATE_MATH1(atan) ROCMIGRATE_MATH1(atanh) ROCMIGRATE_MATH1(cbrt) ROCMIGRATE_MATH1(ceil)
ROCMIGRATE_MATH1(cos) ROCMIGRATE_MATH1(cosh) ROCMIGRATE_MATH1(erf) ROCMIGRATE_MATH1(erfc)
ROCMIGRATE_MATH1(exp) ROCMIGRATE_MATH1(exp2) ROCMIGRATE_MATH1(expm1) ROCMIGRATE_MATH1(fabs)
ROCMIGRATE_MATH1(floor) ROCMIGRATE_MATH1(lgamma) ROCMIGRATE_MATH1(log)
ROCMIGRATE_MATH1(log10) ROCMIGRATE_MATH1(log1p) ROCMIGRATE_MATH1(log2) ROCMIGRATE_MATH1(logb)
ROCMIGRATE_MATH1(nearbyint) ROCMIGRATE_MATH1(rint) ROCMIGRATE_MATH1(round)
ROCMIGRATE_MATH1(sin) ROCMIGRATE_MATH1(sinh) ROCMIGRATE_MATH1(sqrt) ROCMIGRATE_MATH1(tan)
ROCMIGRATE_MATH1(tanh) ROCMIGRATE_MATH1(tgamma) ROCMIGRATE_MATH1(trunc)
ROCMIGRATE_MATH2(atan2) ROCMIGRATE_MATH2(copysign) ROCMIGRATE_MATH2(fdim)
ROCMIGRATE_MATH2(fmax) ROCMIGRATE_MATH2(fmin) ROCMIGRATE_MATH2(fmod) ROCMIGRATE_MATH2(hypot)
ROCMIGRATE_MATH2(nextafter) ROCMIGRATE_MATH2(pow) ROCMIGRATE_MATH2(remainder)

ROCMIGRATE_D double fma(double x, double y, double z);
ROCMIGRATE_D float fmaf(float x, float y, float z);
ROCMIGRATE_D float fma(float x, float y, float z);
ROCMIGRATE_D float pow(float x, int y);
ROCMIGRATE_D double pow(double x, int y);
ROCMIGRATE_D double frexp(double x, int *e);
ROCMIGRATE_D float frexpf(float x, int *e);
ROCMIGRATE_D float frexp(float x, int *e);
ROCMIGRATE_D double ldexp(double x, int e);
ROCMIGRATE_D float ldexpf(float x, int e);
ROCMIGRATE_D float ldexp(float x, int e);
ROCMIGRATE_D double scalbn(double x, int e);
ROCMIGRATE_D float scalbnf(float x, int e);
ROCMIGRATE_D double modf(double x, double *i);
ROCMIGRATE_D float modff(float x, float *i);
ROCMIGRATE_D float modf(float x, float *i);
ROCMIGRATE_D double remquo(double x, double y, int *q);
ROCMIGRATE_D float remquof(float x, float y, int *q);
ROCMIGRATE_D int ilogb(double x);
ROCMIGRATE_D int ilogbf(float x);
ROCMIGRATE_D long lrint(double x);
ROCMIGRATE_D long lrintf(float x);
ROCMIGRATE_D long lround(double x);
ROCMIGRATE_D long lroundf(float x);
ROCMIGRATE_D long long llrint(double x);
ROCMIGRATE_D long long llrintf(float x);
ROCMIGRATE_D long long llround(double x);
ROCMIGRATE_D long long llroundf(float x);
ROCMIGRATE_D double nan(const char *tag);
ROCMIGRATE_D float nanf(const char *tag);
ROCMIGRATE_D int abs(int x);
ROCMIGRATE_D long labs(long x);
ROCMIGRATE_D long long llabs(long long x);
ROCMIGRATE_D long abs(long x);
ROCMIGRATE_D long long abs(long long x);
ROCMIGRATE_D float abs(float x);
ROCMIGRATE_D double abs(double x);
ROCMIGRATE_D bool isnan(float x);
ROCMIGRATE_D bool isnan(double x);
ROCMIGRATE_D bool isinf(float x);
ROCMIGRATE_D bool isinf(double x);
ROCMIGRATE_D bool isfinite(float x);
ROCMIGRATE_D bool isfinite(double x);
ROCMIGRATE_D bool signbit(float x);
ROCMIGRATE_D bool signbit(double x);
ROCMIGRATE_D int __isnanf(float x);
ROCMIGRATE_D int __isnan(double x);
ROCMIGRATE_D int __isinff(float x);
ROCMIGRATE_D int __isinf(double x);
ROCMIGRATE_D int __finitef(float x);
ROCMIGRATE_D int __finite(double x);
ROCMIGRATE_D int __signbitf(float x);
ROCMIGRATE_D int __signbit(double x);

#undef ROCMIGRATE_MATH1
#undef ROCMIGRATE_MATH2
#undef ROCMIGRATE_D
#endif
