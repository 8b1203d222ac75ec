/* rocmigrate's CUDA declarations: the built-in vector types (x, y, z, w members, the
 * alignments the CUDA programming guide lists), their make_ functions, and dim3. */
#ifndef ROCMIGRATE_VECTOR_TYPES_H
#define ROCMIGRATE_VECTOR_TYPES_H

#define ROCMIGRATE_VECTOR1(T, B, A) \
  struct __attribute__((aligned(A))) T##1 { B x; }; typedef struct T##1 T##1; \
  static inline __attribute__((host)) __attribute__((device)) T##1 make_##T##1(B x) { \
    T##1 v; v.x = x; return v; }
#define ROCMIGRATE_VECTOR2(T, B, A) \
  struct __attribute__((aligned(A))) T##2 { B x, y; }; typedef struct T##2 T##2; \
  static inline __attribute__((host)) __attribute__((device)) T##2 make_##T##2(B x, B y) { \
    T##2 v; v.x = x; v.y = y; return v; }
#define ROCMIGRATE_VECTOR3(T, B) \
  struct T##3 { B x, y, z; }; typedef struct T##3 T##3; \
  static inline __attribute__((host)) __attribute__((device)) T##3 make_##T##3(B x, B y, B z) { \
    T##3 v; v.x = x; v.y = y; v.z = z; return v; }
#define ROCMIGRATE_VECTOR4(T, B, A) \
  struct __attribute__((aligned(A))) T##4 { B x, y, z, w; }; typedef struct T##4 T##4; \
  static inline __attribute__((host)) __attribute__((device)) T##4 make_##T##4(B x, B y, B z, \
                                                                              B w) { \
    T##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }
#define ROCMIGRATE_VECTORS(T, B, A1, A2, A4) \
  ROCMIGRATE_VECTOR1(T, B, A1) ROCMIGRATE_VECTOR2(T, B, A2) ROCMIGRATE_VECTOR3(T, B) \
  ROCMIGRATE_VECTOR4(T, B, A4)

ROCMIGRATE_VECTORS(char, signed char, 1, 2, 4)
ROCMIGRATE_VECTORS(uchar, unsigned char, 1, 2, 4)
ROCMIGRATE_VECTORS(short, short, 2, 4, 8)
ROCMIGRATE_VECTORS(ushort, unsigned short, 2, 4, 8)
ROCMIGRATE_VECTORS(int, int, 4, 8, 16)
ROCMIGRATE_VECTORS(uint, unsigned int, 4, 8, 16)
ROCMIGRATE_VECTORS(long, long, 8, 16, 16)
ROCMIGRATE_VECTORS(ulong, unsigned long, 8, 16, 16)
ROCMIGRATE_VECTORS(longlong, long long, 8, 16, 16)
ROCMIGRATE_VECTORS(ulonglong, unsigned long long, 8, 16, 16)
ROCMIGRATE_VECTORS(float, float, 4, 8, 16)
ROCMIGRATE_VECTORS(double, double, 8, 16, 16)

#undef ROCMIGRATE_VECTORS
#undef ROCMIGRATE_VECTOR1
#undef ROCMIGRATE_VECTOR2
#undef ROCMIGRATE_VECTOR3
#undef ROCMIGRATE_VECTOR4

struct dim3 {
  unsigned int x, y, z;
  __attribute__((host)) __attribute__((device)) constexpr dim3(unsigned int vx = 1,
                                                               unsigned int vy = 1,
                                                               unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  __attribute__((host)) __attribute__((device)) constexpr dim3(uint3 v)
      : x(v.x), y(v.y), z(v.z) {}
  __attribute__((host)) __attribute__((device)) constexpr operator uint3() const {
    return uint3{x, y, z};
  }
};
typedef struct dim3 dim3;

#endif
