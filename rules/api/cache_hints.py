"""CHN001/CHN002: CUDA's cache-hint loads and stores, which HIP lacks -> rocmigrate_cache_hints.h."""

from __future__ import annotations

from .support_functions import SupportFunctions

_POLICY = {"__ldca": "plain load", "__ldcg": "plain load", "__ldcs": "nontemporal load",
           "__ldlu": "nontemporal load", "__ldcv": "volatile load", "__stwb": "plain store",
           "__stcg": "plain store", "__stcs": "nontemporal store", "__stwt": "volatile store"}


class CacheHints(SupportFunctions):
    """Include rocmigrate's definitions of CUDA's cache-hint loads and stores (``__ldcs``,
    ``__ldcg``, ``__ldca``, ``__ldlu``, ``__ldcv``, ``__stcs``, ``__stcg``, ``__stwb``,
    ``__stwt``), which HIP lacks for all but ``__half``.

    ## What it does
    Finds the nine functions of CUDA's "Load/Store Functions Using Cache Hints"
    (``rules/api/cache_hints.tsv``). Where a file uses one as code, the engine includes
    ``rocmigrate_cache_hints.h``, which the run writes beside the output: it defines each under
    its CUDA name as a template for every type, so the call is kept as it is. Streaming hints
    (``__ldcs``, ``__ldlu``, ``__stcs``) become nontemporal accesses
    (``__builtin_nontemporal_load``/``store``, AMD's counterpart of evict-first); "fetch again"
    (``__ldcv``) and "write through" (``__stwt``) become volatile accesses, which the compiler
    never merges or answers from an earlier access; the others are plain accesses. Arithmetic
    types and pointers are accessed whole, other trivially copyable types (``float4``, the
    project's own structs) word by word. A file that declares one of them itself gets no
    include, which would clash with its declaration: the others it uses are reported (CHN002),
    with a marker.

    ## Why is this bad on AMD
    HIP declares ``__ldcg``, ``__ldca`` and ``__ldcs`` only for ``__half`` and ``__half2``
    (checked in the HIP 5.2.3 and 6.4.3 headers) and none of the others: a port that keeps
    ``__ldcs(&in[i])`` on a ``float`` or ``__stcs(out + i, v)`` does not compile, and removing
    the hint loses the streaming behaviour that large one-pass kernels rely on.

    ## Example
    ```cpp
    __global__ void scale(const float4* in, float4* out, float a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        float4 v = __ldcs(in + i);
        __stcs(out + i, make_float4(a * v.x, a * v.y, a * v.z, a * v.w));
      }
    }
    ```

    ## Use instead
    ```cpp
    #include "rocmigrate_cache_hints.h"
    __global__ void scale(const float4* in, float4* out, float a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        float4 v = __ldcs(in + i);
        __stcs(out + i, make_float4(a * v.x, a * v.y, a * v.z, a * v.w));
      }
    }
    ```

    ## Fix safety
    Safe: a cache hint changes where data is kept, never the value read or written, and each
    definition reads or writes exactly the object CUDA's does; rocmigrate's tests run all nine on
    scalars, vectors and structs on the host and on HIP's CPU runtime. Where CUDA's caches and
    AMD's differ, the speed may too: ``__ldcg``/``__ldca``/``__stcg``/``__stwb`` have no AMD
    counterpart and use the default policy. A type that is not trivially copyable is accessed
    plainly. On NVIDIA the header defines nothing and CUDA's own functions are used.
    """

    code = "CHN001"
    extra_codes = ("CHN002",)
    attention_codes = ("CHN002",)
    name = "cache-hint"
    summary = "CUDA cache-hint load or store HIP lacks"
    table = "cache_hints.tsv"
    header = "rocmigrate_cache_hints.h"  # templates/support/rocmigrate_cache_hints.h.j2
    missing_code = "CHN002"
    quick = (b"__ld", b"__st")

    def describe(self, name: str) -> str:
        return (f"{name}: HIP has no cache-hint {'loads' if name.startswith('__ld') else 'stores'}"
                f" but for __half; rocmigrate_cache_hints.h defines it ({_POLICY[name]})")
