"""Harness spec defaults that follow the kernel's indexing: each buffer holds what the kernel
reaches at the chosen launch, and sizes no launch site gives are lowered until the buffers a
``cudaMalloc`` sizes (and MAX_BUFFER for the others) hold it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import require
from migrator.clang import find_resource_dir, read_kernels
from migrator.harness.sitevalues import SiteValues
from migrator.harness.spec import MAX_BUFFER, default_spec


def specs(tmp_path: Path, source: str) -> dict[str, dict]:
    try:
        import clang.cindex  # noqa: F401
    except ImportError:
        require(False, "the libclang wheel")
    require(find_resource_dir() is not None, "clang's builtin headers")
    path = tmp_path / "k.cu"
    path.write_text(source)
    found = {}
    for kernel in read_kernels(path).kernels:
        assert kernel.reader == "clang", kernel.note
        document = default_spec(kernel, kernel.instantiations[0], "k.cu",
                                SiteValues(source.encode()), kernel.name)
        found[kernel.name] = {"launch": document["launch"], "needs_edit":
                              document.get("needs_edit", ""),
                              **{p["name"]: p for p in document["parameters"]}}
    return found


ATOMS = """
#define MAXATOMS 4000
__global__ void energy(const int numatoms, float *grid, const float4 *atoms) {
  unsigned x = blockIdx.x * blockDim.x * 8 + threadIdx.x;
  float sum = 0.0f;
  for (int a = 0; a < numatoms; a++) sum += atoms[a].w;
  for (int u = 0; u < 8; u++) grid[x + u * 16] += sum;
}
int main(int argc, char **argv) {
  float4 *d_atoms; float *d_grid;
  cudaMalloc((void **)&d_atoms, sizeof(float4) * MAXATOMS);
  for (int start = 0; start < argc; start += MAXATOMS) {
    int run = argc - start;
    energy<<<argc, 16>>>(run, d_grid, d_atoms);
  }
}
"""


def test_a_size_no_site_gives_is_lowered_to_what_its_allocated_buffer_holds(tmp_path: Path):
    """numatoms bounds the loop over atoms, which the file allocates for 4000: the default
    (1 << 20 elements) would read far past it (HeCBench clenergy failed so on both sides)."""
    spec = specs(tmp_path, ATOMS)["energy"]
    assert spec["numatoms"]["value"] == 4000
    assert "lowered from 1048576" in spec["numatoms"]["origin"]
    assert "atoms: indexed up to 1048575" in spec["numatoms"]["origin"]
    assert spec["atoms"]["count"] == 4000
    # the grid: 16 threads a block, its block count unknown: covering the 4000 elements
    grid, block = spec["launch"]["grid"][0], spec["launch"]["block"][0]
    assert block == 16 and grid == 250
    assert spec["grid"]["count"] == (grid - 1) * 16 * 8 + 15 + 7 * 16 + 1
    assert spec["grid"]["origin"].startswith("the kernel's indexing")


def test_a_square_matrix_side_is_lowered_until_the_matrix_fits(tmp_path: Path):
    spec = specs(tmp_path, """
__global__ void rotate(float *m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2)
    for (int j = i; j < n - i - 1; j++) {
      float t = m[i * n + j];
      m[i * n + j] = m[(n - 1 - j) * n + i];
      m[(n - 1 - j) * n + i] = t;
    }
}
""")["rotate"]
    n = spec["n"]["value"]
    assert n * n <= MAX_BUFFER < (n + 1) * (n + 1)
    assert spec["m"]["count"] <= MAX_BUFFER and spec["m"]["count"] >= (n - 1) * n
    assert "lowered" in spec["n"]["origin"]


def test_each_buffer_gets_its_own_count(tmp_path: Path):
    """A product of the three sizes over the buffers of a matrix product: a is m x k, b k x n,
    c m x n (one count for all of them read b past its end)."""
    spec = specs(tmp_path, """
__global__ void product(const float *a, const float *b, float *c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float sum = 0;
    for (int i = 0; i < k; i++) sum += a[row * k + i] * b[i * n + col];
    c[row * n + col] = sum;
  }
}
int main() {
  float *a, *b, *c;
  const int m = 96, n = 64, k = 160;
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (m + 15) / 16);
  product<<<grid, block>>>(a, b, c, m, n, k);
}
""")["product"]
    assert [spec[name]["value"] for name in "mnk"] == [96, 64, 160]
    assert (spec["a"]["count"], spec["b"]["count"], spec["c"]["count"]) == \
        (96 * 160, 160 * 64, 96 * 64)


def test_without_the_indexing_the_old_defaults_stay(tmp_path: Path):
    """An index read from memory bounds nothing: the buffer keeps the count of the sizes."""
    spec = specs(tmp_path, """
__global__ void gather(int n, const int *index, const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[index[i]];
}
""")["gather"]
    assert spec["n"]["value"] == 1 << 20 and spec["in"]["count"] == 1 << 20
    assert spec["in"]["origin"] == "the element count of the size parameters or the launch"
    assert spec["out"]["count"] == 1 << 20


def test_dim3_assigned_member_by_member():
    """``dim3 grid, block;`` then ``block.x = 8;``...: the launch and the byte counts that use
    the members evaluate (HeCBench clenergy's launch, and its output's cudaMalloc)."""
    values = SiteValues(b"""
void helper(dim3 volume, int other);
int main() {
  dim3 volume, grid, block, twice;
  volume.x = 768; volume.y = 768; volume.z = 1;
  block.x = 8;
  block.y = 8;
  grid.x = volume.x / (block.x * 8);
  grid.y = volume.y / block.y;
  twice.x = 4; twice.x = 8;
  int bytes = sizeof(float) * volume.x * volume.y * volume.z;
  float *out;
  cudaMalloc((void **)&out, bytes);
}
""")
    assert values.dim3("block") == (8, 8, 1)
    assert values.dim3("grid") == (12, 96, 1)
    assert values.dim3("twice") is None  # assigned twice: unknown
    assert values.allocated_bytes("out") == 4 * 768 * 768


SHARED = """
__global__ void tile_sum(const float *in, float *out, int n) {
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0] + s[blockDim.x - 1];
}
__device__ float load(const float *p, int i) { return p[i * 8]; }
__global__ void tile_unread(const float *in, float *out, int n) {
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? load(in, i) : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
__global__ void past_the_tile(float *out) {
  __shared__ float s[64];
  s[threadIdx.x + 100] = 1.0f;
  out[threadIdx.x] = s[threadIdx.x];
}
"""


def test_the_default_block_is_lowered_to_fit_a_shared_tile(tmp_path: Path):
    """256 threads would write s[255] of a 64-float tile (HeCBench all-pairs-distance k2,
    convolutionSeparable, matern: an illegal memory access on both sides)."""
    found = specs(tmp_path, SHARED)
    spec = found["tile_sum"]
    assert spec["launch"]["block"] == [64, 1, 1] and not spec["needs_edit"]
    assert "lowered until the kernel's shared arrays hold" in spec["launch"]["origin"]
    assert "__shared__ s: indexed up to 255, holds 64" in spec["launch"]["origin"]
    # every buffer's count follows the launch: a grid covering the elements again
    assert spec["launch"]["grid"][0] * 64 >= spec["n"]["value"]
    # a buffer whose indexing is not read: the grid stays the default block's, so that no
    # thread index grows (HeCBench convolutionSeparable conv_rows, whose blocks each cover 8 x
    # their threads, read past its input on the H200 when 16-thread blocks were given a grid
    # covering the same elements)
    unread = found["tile_unread"]
    assert unread["launch"]["block"] == [64, 1, 1] and unread["launch"]["grid"] == [4096, 1, 1]
    assert "the grid of the default block (4096 x 1 x 1)" in unread["launch"]["origin"]
    # no block fits: the spec says so rather than run out of bounds
    assert "indexes past its shared arrays (__shared__ s: indexed up to 355, holds 64)" in \
        found["past_the_tile"]["needs_edit"]


def test_a_launch_sites_block_is_kept(tmp_path: Path):
    spec = specs(tmp_path, SHARED + """
int main() { float *in, *out; tile_sum<<<16, 256>>>(in, out, 4096); }
""")["tile_sum"]
    assert spec["launch"]["block"] == [256, 1, 1] and not spec["needs_edit"]


def test_a_struct_of_arithmetic_members_gets_a_default_init(tmp_path: Path):
    """Each member of a struct passed by value set as a scalar of its type would be: integers
    1, floating point 0.5, every component of an array or vector member; a struct with a
    pointer member still needs its init from the user."""
    found = specs(tmp_path, """
struct Mat33 { double data[3][3]; };
struct Params { float3 origin; unsigned int cells; float radius; bool wrap; };
struct Holder { float *buffer; int n; };
__global__ void use(Mat33 rotation, Params params, Holder holder, float *out) {
  out[threadIdx.x] = rotation.data[0][0] * params.radius + holder.n;
}
""")["use"]
    assert found["rotation"]["init"] == (
        "[] { Mat33 v{}; for (unsigned i = 0; i < sizeof(v.data) / sizeof(double); ++i) "
        "reinterpret_cast<double *>(&v.data)[i] = 0.5; return v; }()")
    assert found["params"]["init"] == (
        "[] { Params v{}; for (unsigned i = 0; i < sizeof(v.origin) / sizeof(float); ++i) "
        "reinterpret_cast<float *>(&v.origin)[i] = 0.5; v.cells = 1; v.radius = 0.5; "
        "v.wrap = 1; return v; }()")
    assert found["holder"]["init"] == ""
    assert "parameter holder is a struct passed by value (Holder, not all its fields are " \
        "arithmetic)" in found["needs_edit"]
    assert "rotation" not in found["needs_edit"] and "params" not in found["needs_edit"]


DYNAMIC = """
__global__ void pairs(const float *in, float *out, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  s[threadIdx.x + blockDim.x] = 1.0f;
  __syncthreads();
  if (i < n) out[i] = s[threadIdx.x] + s[2 * blockDim.x - 1 - threadIdx.x];
}
__global__ void through_a_cast(float *out) {
  extern __shared__ unsigned char raw[];
  float *values = reinterpret_cast<float *>(raw);
  values[threadIdx.x] = 1.0f;
  out[threadIdx.x] = values[0];
}
"""


def test_dynamic_shared_memory_from_the_kernels_indexing(tmp_path: Path):
    """No launch site: the bytes its extern __shared__ array reaches at the chosen block (two
    floats a thread); through a cast the reading stops and the spec asks for them."""
    found = specs(tmp_path, DYNAMIC)
    spec = found["pairs"]
    assert spec["launch"]["block"] == [256, 1, 1]
    assert spec["launch"]["shared_bytes"] == 2 * 256 * 4 and not spec["needs_edit"]
    assert "what the kernel's extern __shared__ arrays reach" in spec["launch"]["origin"]
    assert "no launch site gives its size" in found["through_a_cast"]["needs_edit"]


def test_dynamic_shared_memory_written_with_the_sites_block(tmp_path: Path):
    """``sizeof(float) * 2 * threads`` where ``threads`` is the site's block: evaluated with
    the block the spec launches (here the site's, unknown to the file's constants, so the
    default)."""
    spec = specs(tmp_path, DYNAMIC + """
int main(int argc, char **argv) {
  float *in, *out;
  int threads = argc * 64;
  pairs<<<16, threads, sizeof(float) * 2 * threads>>>(in, out, 4096);
}
""")["pairs"]
    assert spec["launch"]["block"] == [256, 1, 1] and spec["launch"]["shared_bytes"] == 2048
    assert not spec["needs_edit"]
