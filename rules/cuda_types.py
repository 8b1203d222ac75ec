"""CUDA's 16-bit floating-point types, as the rules that reason about them (atomics, lowerings)
name them: each spelling, CUDA's or HIP's, and the type the converted code has on AMD."""

# spelling (CUDA or HIP) -> the type the converted code has on AMD (native_atomics.tsv's names)
SIXTEEN_BIT = {
    "__half": "__half", "half": "__half",
    "__half2": "__half2", "half2": "__half2",
    "__nv_bfloat16": "__hip_bfloat16", "nv_bfloat16": "__hip_bfloat16",
    "__hip_bfloat16": "__hip_bfloat16",
    "__nv_bfloat162": "__hip_bfloat162", "nv_bfloat162": "__hip_bfloat162",
    "__hip_bfloat162": "__hip_bfloat162",
    "hip_bfloat16": "hip_bfloat16",
}
