"""Sources for the tests of the declaration readers (migrator/semantic/declarations.py, read from
tokens, and lookup.py, from the tree) and of the rules that ask them."""

from __future__ import annotations

from pathlib import Path

# Forms the lexical declaration reader must read as the tree does, or leave to the tree: not all
# of it is valid C++, all of it is what the parser meets.
DECLARATION_FORMS = b"""typedef float real;
#define ADD(p, v) atomicAdd(p, v)
#define LOOP(i, n) for (int i = 0; i < (n); ++i)
__global__ void k(float* out, const float* __restrict__ in, int n) {
  __shared__ float tile[32][33];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = in[i];
  if (threadIdx.x % 32 == 0) atomicAdd(&out[blockIdx.x], v);
  out[i] = v + tile[threadIdx.x][threadIdx.y];
}
__device__ void shadow(float* p, double* q, real* r, long* l2 = nullptr, int m = 3) {
  { double* p = q; atomicAdd(p, 1.0); }
  auto c = (double*)r; auto plain = r; auto& ref = p;
  a * star; b & amp; x * first, second;
  T (*call); float (paren); float (*fp)(int arg);
  float a0 = 1, *a1, a2 = f(x, y), &a3 = a0;
  if (float* z = p) atomicAdd(z, 1.0f);
  for (float* e : list) atomicAdd(e, 1.0f);
  for (int j = 0, *jp = &j; j < m; ++j) g(m * j, &l2[j]);
  switch (m) { case 1: float* cased = nullptr; }
  auto lambda = [&](float* lp, int) { return lp; };
  std::map<int, float*> pairs; std::vector<std::array<float, 4>> rows;
  static_cast<float*>(r)[0] = 1; ADD(p, 1.0f);
  void local(float* proto);
  decltype(r) typed = r; g(a * p, b);
  try { } catch (std::exception& ex) { }
}
template <typename T> __global__ void generic(T* out, T v) { atomicAdd(out, v); }
__global__ void looped(float* r, int m) { LOOP(s, m) { atomicAdd(&r[s], 1.0f); } }
std::string &Options::get(const std::string &key) { return table[key]; }
"""
# the parser reads these files' functions otherwise than their braces say
MACRO_LINES = b"""#define ALIGN(t, b) struct Align_##t { t v; } __attribute__((aligned(b)));
ALIGN(float4, 16)
ALIGN(double2, 16)
__global__ void k(float* out) { atomicAdd(out, 1.0f); }
"""
KNR = b"""int knr(a) int a; { return a; }
__global__ void k(float* out) { atomicAdd(out, 1.0f); }
"""


def sources() -> list[tuple[str, bytes]]:
    """The forms above, the atomics rules' fixtures and kernels/: (name, text)."""
    root = Path(__file__).resolve().parent.parent
    files = sorted((root / "fixtures" / "rules").glob("ATM00*/*.cu")) + sorted(
        p for p in (root / "kernels").iterdir() if p.suffix in (".cu", ".h"))
    return [(p.name, p.read_bytes()) for p in files] + [
        ("forms.cu", DECLARATION_FORMS), ("macro_lines.cu", MACRO_LINES), ("knr.cu", KNR)]
