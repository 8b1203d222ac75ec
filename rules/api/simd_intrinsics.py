"""SIM001/SIM002: CUDA's SIMD video intrinsics and integer dot products, which HIP lacks ->
rocmigrate_simd.h."""

from __future__ import annotations

from pathlib import Path

from .support_functions import SupportFunctions, table_names

TABLE = "simd.tsv"  # the intrinsics, in the API tables' folder (API001 leaves them alone)


def intrinsics(api_dir: Path) -> frozenset[bytes]:
    """The names rocmigrate_simd.h defines: the rows of ``simd.tsv``."""
    return table_names(api_dir, TABLE)


class SimdIntrinsics(SupportFunctions):
    """Include rocmigrate's definitions of CUDA's SIMD video intrinsics (``__vadd2``,
    ``__vmaxs4``, ``__vcmpgtu4``, ``__vsads2``...) and integer dot products (``__dp4a``,
    ``__dp2a_lo``, ``__dp2a_hi``), which HIP lacks.

    ## What it does
    Finds the 82 SIMD intrinsics of CUDA's Math API (``rules/api/simd.tsv``): per-halfword
    (``__v<op>2``) and per-byte (``__v<op>4``) addition, subtraction, average, absolute value and
    difference, minimum, maximum, negation, comparisons and sums of absolute differences, signed,
    unsigned and saturating; and the integer dot products of ``sm_61_intrinsics.h``
    (``__dp4a`` on four bytes, ``__dp2a_lo``/``__dp2a_hi`` on two halfwords and two bytes, in
    their int, unsigned and vector forms). Where a file uses one as code (a call, a macro body, a function
    pointer), the engine includes ``rocmigrate_simd.h``, which the run writes beside the output:
    it defines each of them under its CUDA name, in plain C++ from CUDA's documented semantics,
    so the call is kept as it is. A file that declares one of them itself (CUDA's own headers,
    or a project's fallback for HIP) gets no include, which would clash with its declaration:
    the other intrinsics it uses are reported (SIM002), with a marker.

    ## Why is this bad on AMD
    HIP declares none of these functions (checked in the HIP 5.2.3 and 6.4.3 headers): the port
    does not compile, and a port by hand has to get each element's signedness, saturation and
    rounding right (``__vavgs*`` rounds half away from zero, ``__vavgu*`` half up, ``__vhaddu*``
    down). The definitions are plain C++ on 32-bit integers, without inline assembly, so they
    build for every AMD target; the compiler chooses the instructions.

    ## Example
    ```cpp
    __global__ void relu(const int* in, int* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = __vmaxs4(in[i], 0);
    }
    ```

    ## Use instead
    ```cpp
    #include "rocmigrate_simd.h"
    __global__ void relu(const int* in, int* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = __vmaxs4(in[i], 0);
    }
    ```

    ## Fix safety
    Safe: each definition computes what CUDA documents for the intrinsic, element by element
    (saturation, rounding of the averages, signedness of the comparisons); rocmigrate's tests
    compare all 82 with a reference on edge and random inputs. On NVIDIA the header defines
    nothing and CUDA's own intrinsics are used.
    """

    code = "SIM001"
    extra_codes = ("SIM002",)
    attention_codes = ("SIM002",)
    name = "simd-intrinsic"
    summary = "CUDA SIMD video intrinsic HIP lacks"
    table = TABLE
    header = "rocmigrate_simd.h"  # templates/support/rocmigrate_simd.h.j2
    missing_code = "SIM002"
    quick = (b"__v", b"__dp")

    def describe(self, name: str) -> str:
        kind = "integer dot products" if name.startswith("__dp") else "SIMD video intrinsics"
        return f"{name}: HIP has no {kind}; rocmigrate_simd.h defines it with CUDA's semantics"
