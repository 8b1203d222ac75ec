/* rocmigrate's CUDA declarations: the device functions a kernel calls (synchronisation,
 * atomics, warp functions, math intrinsics), by the names and signatures of the CUDA
 * documentation. Declarations only: a host-side parse never emits device code. */
#ifndef ROCMIGRATE_DEVICE_FUNCTIONS_H
#define ROCMIGRATE_DEVICE_FUNCTIONS_H

#include "vector_types.h"

#define ROCMIGRATE_D __attribute__((device))
#define ROCMIGRATE_HD __attribute__((host)) __attribute__((device))

/* ---- synchronisation, fences, timers ---- */
ROCMIGRATE_D void __syncthreads(void);
ROCMIGRATE_D int __syncthreads_count(int predicate);
ROCMIGRATE_D int __syncthreads_and(int predicate);
ROCMIGRATE_D int __syncthreads_or(int predicate);
ROCMIGRATE_D void __syncwarp(unsigned int mask = 0xffffffffu);
ROCMIGRATE_D void __threadfence(void);
ROCMIGRATE_D void __threadfence_block(void);
ROCMIGRATE_D void __threadfence_system(void);
ROCMIGRATE_D long long clock64(void);
ROCMIGRATE_D void __nanosleep(unsigned int ns);
ROCMIGRATE_D void __trap(void);

/* ---- the C library functions device code may call ---- */
ROCMIGRATE_D int printf(const char *format, ...);
ROCMIGRATE_D void *memcpy(void *destination, const void *source, size_t count);
ROCMIGRATE_D void *memset(void *destination, int value, size_t count);
ROCMIGRATE_D void *malloc(size_t size);
ROCMIGRATE_D void free(void *pointer);
ROCMIGRATE_D long clock(void);
/* what glibc's assert() calls */
ROCMIGRATE_D void __assert_fail(const char *assertion, const char *file, unsigned int line,
                                const char *function);

/* ---- atomics (the _block and _system scopes take the same arguments) ---- */
#define ROCMIGRATE_ATOMICS(S) \
  ROCMIGRATE_D int atomicAdd##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicAdd##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D unsigned long long atomicAdd##S(unsigned long long *address, \
                                               unsigned long long val); \
  ROCMIGRATE_D float atomicAdd##S(float *address, float val); \
  ROCMIGRATE_D double atomicAdd##S(double *address, double val); \
  ROCMIGRATE_D float2 atomicAdd##S(float2 *address, float2 val); \
  ROCMIGRATE_D float4 atomicAdd##S(float4 *address, float4 val); \
  ROCMIGRATE_D int atomicSub##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicSub##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D int atomicExch##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicExch##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D unsigned long long atomicExch##S(unsigned long long *address, \
                                                unsigned long long val); \
  ROCMIGRATE_D float atomicExch##S(float *address, float val); \
  ROCMIGRATE_D int atomicMin##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicMin##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D long long atomicMin##S(long long *address, long long val); \
  ROCMIGRATE_D unsigned long long atomicMin##S(unsigned long long *address, \
                                               unsigned long long val); \
  ROCMIGRATE_D int atomicMax##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicMax##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D long long atomicMax##S(long long *address, long long val); \
  ROCMIGRATE_D unsigned long long atomicMax##S(unsigned long long *address, \
                                               unsigned long long val); \
  ROCMIGRATE_D unsigned int atomicInc##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D unsigned int atomicDec##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D int atomicCAS##S(int *address, int compare, int val); \
  ROCMIGRATE_D unsigned int atomicCAS##S(unsigned int *address, unsigned int compare, \
                                         unsigned int val); \
  ROCMIGRATE_D unsigned long long atomicCAS##S(unsigned long long *address, \
                                               unsigned long long compare, \
                                               unsigned long long val); \
  ROCMIGRATE_D unsigned short atomicCAS##S(unsigned short *address, unsigned short compare, \
                                           unsigned short val); \
  ROCMIGRATE_D int atomicAnd##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicAnd##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D unsigned long long atomicAnd##S(unsigned long long *address, \
                                               unsigned long long val); \
  ROCMIGRATE_D int atomicOr##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicOr##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D unsigned long long atomicOr##S(unsigned long long *address, \
                                              unsigned long long val); \
  ROCMIGRATE_D int atomicXor##S(int *address, int val); \
  ROCMIGRATE_D unsigned int atomicXor##S(unsigned int *address, unsigned int val); \
  ROCMIGRATE_D unsigned long long atomicXor##S(unsigned long long *address, \
                                               unsigned long long val);
ROCMIGRATE_ATOMICS()
ROCMIGRATE_ATOMICS(_block)
ROCMIGRATE_ATOMICS(_system)
#undef ROCMIGRATE_ATOMICS

/* ---- warp functions ---- */
ROCMIGRATE_D unsigned int __ballot_sync(unsigned int mask, int predicate);
ROCMIGRATE_D int __all_sync(unsigned int mask, int predicate);
ROCMIGRATE_D int __any_sync(unsigned int mask, int predicate);
ROCMIGRATE_D unsigned int __activemask(void);
ROCMIGRATE_D unsigned int __ballot(int predicate);
ROCMIGRATE_D int __all(int predicate);
ROCMIGRATE_D int __any(int predicate);
template <class T> ROCMIGRATE_D unsigned int __match_any_sync(unsigned int mask, T value);
template <class T>
ROCMIGRATE_D unsigned int __match_all_sync(unsigned int mask, T value, int *pred);
template <class T> ROCMIGRATE_D T __shfl_sync(unsigned int mask, T var, int srcLane,
                                              int width = 32);
template <class T> ROCMIGRATE_D T __shfl_up_sync(unsigned int mask, T var, unsigned int delta,
                                                 int width = 32);
template <class T> ROCMIGRATE_D T __shfl_down_sync(unsigned int mask, T var,
                                                   unsigned int delta, int width = 32);
template <class T> ROCMIGRATE_D T __shfl_xor_sync(unsigned int mask, T var, int laneMask,
                                                  int width = 32);
template <class T> ROCMIGRATE_D T __shfl(T var, int srcLane, int width = 32);
template <class T> ROCMIGRATE_D T __shfl_up(T var, unsigned int delta, int width = 32);
template <class T> ROCMIGRATE_D T __shfl_down(T var, unsigned int delta, int width = 32);
template <class T> ROCMIGRATE_D T __shfl_xor(T var, int laneMask, int width = 32);
template <class T> ROCMIGRATE_D T __reduce_add_sync(unsigned int mask, T value);
template <class T> ROCMIGRATE_D T __reduce_min_sync(unsigned int mask, T value);
template <class T> ROCMIGRATE_D T __reduce_max_sync(unsigned int mask, T value);

/* ---- loads and stores through the caches ---- */
template <class T> ROCMIGRATE_D T __ldg(const T *address);
template <class T> ROCMIGRATE_D T __ldcg(const T *address);
template <class T> ROCMIGRATE_D T __ldca(const T *address);
template <class T> ROCMIGRATE_D T __ldcs(const T *address);
template <class T> ROCMIGRATE_D T __ldlu(const T *address);
template <class T> ROCMIGRATE_D T __ldcv(const T *address);
template <class T> ROCMIGRATE_D void __stwb(T *address, T value);
template <class T> ROCMIGRATE_D void __stcg(T *address, T value);
template <class T> ROCMIGRATE_D void __stcs(T *address, T value);
template <class T> ROCMIGRATE_D void __stwt(T *address, T value);

/* ---- integer intrinsics ---- */
ROCMIGRATE_D int __popc(unsigned int x);
ROCMIGRATE_D int __popcll(unsigned long long x);
ROCMIGRATE_D int __clz(int x);
ROCMIGRATE_D int __clzll(long long x);
ROCMIGRATE_D int __ffs(int x);
ROCMIGRATE_D int __ffsll(long long x);
ROCMIGRATE_D unsigned int __brev(unsigned int x);
ROCMIGRATE_D unsigned long long __brevll(unsigned long long x);
ROCMIGRATE_D unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s);
ROCMIGRATE_D unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift);
ROCMIGRATE_D unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift);
ROCMIGRATE_D unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi,
                                           unsigned int shift);
ROCMIGRATE_D unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi,
                                           unsigned int shift);
ROCMIGRATE_D int __mul24(int x, int y);
ROCMIGRATE_D unsigned int __umul24(unsigned int x, unsigned int y);
ROCMIGRATE_D int __mulhi(int x, int y);
ROCMIGRATE_D unsigned int __umulhi(unsigned int x, unsigned int y);
ROCMIGRATE_D long long __mul64hi(long long x, long long y);
ROCMIGRATE_D unsigned long long __umul64hi(unsigned long long x, unsigned long long y);
ROCMIGRATE_D int __hadd(int x, int y);
ROCMIGRATE_D int __rhadd(int x, int y);
ROCMIGRATE_D unsigned int __uhadd(unsigned int x, unsigned int y);
ROCMIGRATE_D unsigned int __urhadd(unsigned int x, unsigned int y);
ROCMIGRATE_D unsigned int __sad(int x, int y, unsigned int z);
ROCMIGRATE_D unsigned int __usad(unsigned int x, unsigned int y, unsigned int z);
ROCMIGRATE_D unsigned int __vabsdiffu2(unsigned int a, unsigned int b);
ROCMIGRATE_D unsigned int __vabsdiffu4(unsigned int a, unsigned int b);
ROCMIGRATE_D int __dp4a(int srcA, int srcB, int c);
ROCMIGRATE_D unsigned int __dp4a(unsigned int srcA, unsigned int srcB, unsigned int c);

/* ---- SIMD functions on two 16-bit or four 8-bit lanes of an unsigned int ---- */
#define ROCMIGRATE_SIMD1(name) ROCMIGRATE_D unsigned int name##2(unsigned int a); \
  ROCMIGRATE_D unsigned int name##4(unsigned int a);
#define ROCMIGRATE_SIMD2(name) ROCMIGRATE_D unsigned int name##2(unsigned int a, unsigned int b); \
  ROCMIGRATE_D unsigned int name##4(unsigned int a, unsigned int b);
ROCMIGRATE_SIMD1(__vabs) ROCMIGRATE_SIMD1(__vabsss) ROCMIGRATE_SIMD1(__vneg)
ROCMIGRATE_SIMD1(__vnegss)
ROCMIGRATE_SIMD2(__vabsdiffs) ROCMIGRATE_SIMD2(__vadd) ROCMIGRATE_SIMD2(__vaddss)
ROCMIGRATE_SIMD2(__vaddus) ROCMIGRATE_SIMD2(__vavgs) ROCMIGRATE_SIMD2(__vavgu)
ROCMIGRATE_SIMD2(__vcmpeq) ROCMIGRATE_SIMD2(__vcmpges) ROCMIGRATE_SIMD2(__vcmpgeu)
ROCMIGRATE_SIMD2(__vcmpgts) ROCMIGRATE_SIMD2(__vcmpgtu) ROCMIGRATE_SIMD2(__vcmples)
ROCMIGRATE_SIMD2(__vcmpleu) ROCMIGRATE_SIMD2(__vcmplts) ROCMIGRATE_SIMD2(__vcmpltu)
ROCMIGRATE_SIMD2(__vcmpne) ROCMIGRATE_SIMD2(__vhaddu) ROCMIGRATE_SIMD2(__vmaxs)
ROCMIGRATE_SIMD2(__vmaxu) ROCMIGRATE_SIMD2(__vmins) ROCMIGRATE_SIMD2(__vminu)
ROCMIGRATE_SIMD2(__vsads) ROCMIGRATE_SIMD2(__vsadu) ROCMIGRATE_SIMD2(__vseteq)
ROCMIGRATE_SIMD2(__vsetges) ROCMIGRATE_SIMD2(__vsetgeu) ROCMIGRATE_SIMD2(__vsetgts)
ROCMIGRATE_SIMD2(__vsetgtu) ROCMIGRATE_SIMD2(__vsetles) ROCMIGRATE_SIMD2(__vsetleu)
ROCMIGRATE_SIMD2(__vsetlts) ROCMIGRATE_SIMD2(__vsetltu) ROCMIGRATE_SIMD2(__vsetne)
ROCMIGRATE_SIMD2(__vsub) ROCMIGRATE_SIMD2(__vsubss) ROCMIGRATE_SIMD2(__vsubus)
#undef ROCMIGRATE_SIMD1
#undef ROCMIGRATE_SIMD2

/* ---- min and max overloads the CUDA math API declares ---- */
ROCMIGRATE_HD int min(int a, int b);
ROCMIGRATE_HD unsigned int min(unsigned int a, unsigned int b);
ROCMIGRATE_HD unsigned int min(int a, unsigned int b);
ROCMIGRATE_HD unsigned int min(unsigned int a, int b);
ROCMIGRATE_HD long min(long a, long b);
ROCMIGRATE_HD unsigned long min(unsigned long a, unsigned long b);
ROCMIGRATE_HD long long min(long long a, long long b);
ROCMIGRATE_HD unsigned long long min(unsigned long long a, unsigned long long b);
ROCMIGRATE_HD float min(float a, float b);
ROCMIGRATE_HD double min(double a, double b);
ROCMIGRATE_HD double min(float a, double b);
ROCMIGRATE_HD double min(double a, float b);
ROCMIGRATE_HD int max(int a, int b);
ROCMIGRATE_HD unsigned int max(unsigned int a, unsigned int b);
ROCMIGRATE_HD unsigned int max(int a, unsigned int b);
ROCMIGRATE_HD unsigned int max(unsigned int a, int b);
ROCMIGRATE_HD long max(long a, long b);
ROCMIGRATE_HD unsigned long max(unsigned long a, unsigned long b);
ROCMIGRATE_HD long long max(long long a, long long b);
ROCMIGRATE_HD unsigned long long max(unsigned long long a, unsigned long long b);
ROCMIGRATE_HD float max(float a, float b);
ROCMIGRATE_HD double max(double a, double b);
ROCMIGRATE_HD double max(float a, double b);
ROCMIGRATE_HD double max(double a, float b);
ROCMIGRATE_HD int umin(unsigned int a, unsigned int b);
ROCMIGRATE_HD unsigned long long ullmin(unsigned long long a, unsigned long long b);
ROCMIGRATE_HD unsigned long long ullmax(unsigned long long a, unsigned long long b);
ROCMIGRATE_HD long long llmin(long long a, long long b);
ROCMIGRATE_HD long long llmax(long long a, long long b);
ROCMIGRATE_HD unsigned int umax(unsigned int a, unsigned int b);

/* ---- single and double precision intrinsics and the math the C library lacks ---- */
#define ROCMIGRATE_F1(name) ROCMIGRATE_D float name(float x);
#define ROCMIGRATE_F2(name) ROCMIGRATE_D float name(float x, float y);
#define ROCMIGRATE_D1(name) ROCMIGRATE_D double name(double x);
#define ROCMIGRATE_D2(name) ROCMIGRATE_D double name(double x, double y);
#define ROCMIGRATE_ROUNDINGS_F2(name) ROCMIGRATE_F2(name##_rn) ROCMIGRATE_F2(name##_rz) \
  ROCMIGRATE_F2(name##_ru) ROCMIGRATE_F2(name##_rd)
#define ROCMIGRATE_ROUNDINGS_D2(name) ROCMIGRATE_D2(name##_rn) ROCMIGRATE_D2(name##_rz) \
  ROCMIGRATE_D2(name##_ru) ROCMIGRATE_D2(name##_rd)
ROCMIGRATE_ROUNDINGS_F2(__fadd) ROCMIGRATE_ROUNDINGS_F2(__fsub) ROCMIGRATE_ROUNDINGS_F2(__fmul)
ROCMIGRATE_ROUNDINGS_F2(__fdiv) ROCMIGRATE_ROUNDINGS_D2(__dadd) ROCMIGRATE_ROUNDINGS_D2(__dsub)
ROCMIGRATE_ROUNDINGS_D2(__dmul) ROCMIGRATE_ROUNDINGS_D2(__ddiv)
ROCMIGRATE_F1(__fsqrt_rn) ROCMIGRATE_F1(__fsqrt_rz) ROCMIGRATE_F1(__fsqrt_ru)
ROCMIGRATE_F1(__fsqrt_rd) ROCMIGRATE_F1(__frsqrt_rn) ROCMIGRATE_F1(__frcp_rn)
ROCMIGRATE_F1(__frcp_rz) ROCMIGRATE_F1(__frcp_ru) ROCMIGRATE_F1(__frcp_rd)
ROCMIGRATE_D1(__dsqrt_rn) ROCMIGRATE_D1(__dsqrt_rz) ROCMIGRATE_D1(__dsqrt_ru)
ROCMIGRATE_D1(__dsqrt_rd) ROCMIGRATE_D1(__drcp_rn) ROCMIGRATE_D1(__drcp_rz)
ROCMIGRATE_D1(__drcp_ru) ROCMIGRATE_D1(__drcp_rd)
ROCMIGRATE_D float __fmaf_rn(float x, float y, float z);
ROCMIGRATE_D float __fmaf_rz(float x, float y, float z);
ROCMIGRATE_D float __fmaf_ru(float x, float y, float z);
ROCMIGRATE_D float __fmaf_rd(float x, float y, float z);
ROCMIGRATE_D double __fma_rn(double x, double y, double z);
ROCMIGRATE_D double __fma_rz(double x, double y, double z);
ROCMIGRATE_D double __fma_ru(double x, double y, double z);
ROCMIGRATE_D double __fma_rd(double x, double y, double z);
ROCMIGRATE_F1(__expf) ROCMIGRATE_F1(__exp10f) ROCMIGRATE_F1(__logf) ROCMIGRATE_F1(__log2f)
ROCMIGRATE_F1(__log10f) ROCMIGRATE_F1(__sinf) ROCMIGRATE_F1(__cosf) ROCMIGRATE_F1(__tanf)
ROCMIGRATE_F1(__saturatef) ROCMIGRATE_F2(__fdividef) ROCMIGRATE_F2(__powf)
ROCMIGRATE_F2(fdividef)
ROCMIGRATE_D void __sincosf(float x, float *s, float *c);
ROCMIGRATE_D void sincosf(float x, float *s, float *c);
ROCMIGRATE_D void sincos(double x, double *s, double *c);
ROCMIGRATE_D void sincospif(float x, float *s, float *c);
ROCMIGRATE_D void sincospi(double x, double *s, double *c);
ROCMIGRATE_D float rsqrtf(float x);
ROCMIGRATE_D double rsqrt(double x);
ROCMIGRATE_D float rcbrtf(float x);
ROCMIGRATE_D double rcbrt(double x);
ROCMIGRATE_D float sinpif(float x);
ROCMIGRATE_D double sinpi(double x);
ROCMIGRATE_D float cospif(float x);
ROCMIGRATE_D double cospi(double x);
ROCMIGRATE_D float exp10f(float x);
ROCMIGRATE_D double exp10(double x);
ROCMIGRATE_D float normcdff(float x);
ROCMIGRATE_D double normcdf(double x);
ROCMIGRATE_D float normcdfinvf(float x);
ROCMIGRATE_D double normcdfinv(double x);
ROCMIGRATE_D float erfinvf(float x);
ROCMIGRATE_D double erfinv(double x);
ROCMIGRATE_D float erfcinvf(float x);
ROCMIGRATE_D double erfcinv(double x);
ROCMIGRATE_D float erfcxf(float x);
ROCMIGRATE_D double erfcx(double x);
ROCMIGRATE_D float norm3df(float a, float b, float c);
ROCMIGRATE_D double norm3d(double a, double b, double c);
ROCMIGRATE_D float rnorm3df(float a, float b, float c);
ROCMIGRATE_D double rnorm3d(double a, double b, double c);
ROCMIGRATE_D float norm4df(float a, float b, float c, float d);
ROCMIGRATE_D float rhypotf(float x, float y);
ROCMIGRATE_D double rhypot(double x, double y);
ROCMIGRATE_D float saturate(float x);

/* ---- conversions and reinterpretations ---- */
ROCMIGRATE_D float __int_as_float(int x);
ROCMIGRATE_D int __float_as_int(float x);
ROCMIGRATE_D float __uint_as_float(unsigned int x);
ROCMIGRATE_D unsigned int __float_as_uint(float x);
ROCMIGRATE_D double __longlong_as_double(long long x);
ROCMIGRATE_D long long __double_as_longlong(double x);
ROCMIGRATE_D double __hiloint2double(int hi, int lo);
ROCMIGRATE_D int __double2hiint(double x);
ROCMIGRATE_D int __double2loint(double x);
#define ROCMIGRATE_CONVERSION(name, R, A) ROCMIGRATE_D R name##_rn(A x); \
  ROCMIGRATE_D R name##_rz(A x); ROCMIGRATE_D R name##_ru(A x); ROCMIGRATE_D R name##_rd(A x);
ROCMIGRATE_CONVERSION(__float2int, int, float)
ROCMIGRATE_CONVERSION(__float2uint, unsigned int, float)
ROCMIGRATE_CONVERSION(__float2ll, long long, float)
ROCMIGRATE_CONVERSION(__float2ull, unsigned long long, float)
ROCMIGRATE_CONVERSION(__double2int, int, double)
ROCMIGRATE_CONVERSION(__double2uint, unsigned int, double)
ROCMIGRATE_CONVERSION(__double2ll, long long, double)
ROCMIGRATE_CONVERSION(__double2ull, unsigned long long, double)
ROCMIGRATE_CONVERSION(__double2float, float, double)
ROCMIGRATE_CONVERSION(__int2float, float, int)
ROCMIGRATE_CONVERSION(__uint2float, float, unsigned int)
ROCMIGRATE_CONVERSION(__ll2float, float, long long)
ROCMIGRATE_CONVERSION(__ull2float, float, unsigned long long)
ROCMIGRATE_CONVERSION(__ll2double, double, long long)
ROCMIGRATE_CONVERSION(__ull2double, double, unsigned long long)
ROCMIGRATE_D double __int2double_rn(int x);
ROCMIGRATE_D double __uint2double_rn(unsigned int x);
#undef ROCMIGRATE_CONVERSION
#undef ROCMIGRATE_F1
#undef ROCMIGRATE_F2
#undef ROCMIGRATE_D1
#undef ROCMIGRATE_D2
#undef ROCMIGRATE_ROUNDINGS_F2
#undef ROCMIGRATE_ROUNDINGS_D2

#undef ROCMIGRATE_D
#undef ROCMIGRATE_HD
#endif
