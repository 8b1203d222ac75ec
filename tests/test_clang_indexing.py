"""The libclang front end's reading of how far a kernel indexes its buffers
(migrator.clang.indexing), on fixtures/kernel_indexing/indexing.cu."""

from __future__ import annotations

import pytest

from conftest import ROOT, require
from migrator.clang import find_resource_dir, read_kernels
from migrator.clang.indexing import INFINITY, interval

SOURCE = ROOT / "fixtures" / "kernel_indexing" / "indexing.cu"


@pytest.fixture(scope="module")
def indexing():
    try:
        import clang.cindex  # noqa: F401
    except ImportError:
        require(False, "the libclang wheel")
    require(find_resource_dir() is not None, "clang's builtin headers")
    reading = read_kernels(SOURCE)
    found = {}
    for kernel in reading.kernels:
        assert kernel.reader == "clang", kernel.note
        for instantiation in kernel.instantiations:
            found[kernel.name] = {b.name: b for b in instantiation.indexing}
    return found


def launch(grid, block, **scalars):
    return {"grid": tuple(grid) + (1,) * (3 - len(grid)),
            "block": tuple(block) + (1,) * (3 - len(block)), "scalars": scalars}


def extents(buffers, values):
    return {name: buffer.extent(values) for name, buffer in buffers.items()}


def test_a_guard_bounds_the_thread_index(indexing):
    # more threads than n: the guard; fewer: the threads
    assert extents(indexing["guarded"], launch([8], [256], n=1000)) == {"in": 1000, "out": 1000}
    assert extents(indexing["guarded"], launch([8], [256], n=5000)) == {"in": 2048, "out": 2048}


def test_an_early_return_and_a_loop_bound_a_two_dimensional_index(indexing):
    values = launch([2, 1], [16, 16], rows=10, cols=20)
    assert extents(indexing["matrix"], values) == {"a": 10 * 20, "sums": 10}
    # without the guard's bound the rows would be the 16 threads of y
    assert extents(indexing["matrix"], launch([2, 1], [16, 16], rows=100, cols=20)) == \
        {"a": 16 * 20, "sums": 16}


def test_unrolled_writes_and_a_loop_over_a_count(indexing):
    values = launch([4], [256], count=4000)
    assert extents(indexing["unrolled"], values) == {"grid": 4 * 256 * 4, "atoms": 4000}


def test_a_row_pointer_a_grid_stride_loop_and_a_member_through_an_arrow(indexing):
    values = launch([2], [32], n=100, width=8)
    assert extents(indexing["rows"], values) == {"m": 100 * 8, "out": 100, "pair": 1}
    assert all(buffer.complete for buffer in indexing["rows"].values())


def test_what_cannot_be_bounded_says_so(indexing):
    buffers = indexing["gather"]
    values = launch([4], [256], n=1000)
    assert buffers["index"].extent(values) == 1000 and buffers["index"].complete
    assert buffers["in"].extent(values) is None  # in[index[i]]: read from memory
    assert not buffers["scratch"].complete and "used whole" in buffers["scratch"].note


def test_a_ternary_and_a_modulo_stay_in_bounds(indexing):
    buffers = indexing["wrap"]
    values = launch([1], [64], nx=50)
    assert extents(buffers, values) == {"in": 50, "out": 50}
    lows = [interval(index, values)[0] for index in buffers["in"].indexes]
    assert min(lows) == 0  # i == 0 takes nx - 1, not i - 1


def test_a_template_argument_is_a_constant(indexing):
    assert extents(indexing["tiled"], launch([16], [64], n=1024)) == {"data": 1024}
    assert extents(indexing["tiled"], launch([16], [64], n=99999)) == {"data": 1024}


def test_interval_arithmetic():
    values = launch([4], [8], n=10)
    thread = ("+", ("*", ("b", "blockIdx", "x"), ("b", "blockDim", "x")), ("b", "threadIdx", "x"))
    assert interval(thread, values) == (0, 31)
    assert interval(("le", thread, ("-", ("p", "n"), ("c", 1))), values) == (0, 9)
    assert interval(("ge", ("c", 3), ("c", 5)), values) is None  # no thread takes it
    assert interval(("/", thread, ("c", 4)), values) == (0, 7)
    assert interval(("%", ("-", thread, ("c", 40)), ("c", 8)), values) == (-7, 0)
    assert interval(("<<", thread, ("c", 2)), values) == (0, 124)
    assert interval(("&", thread, ("c", 7)), values) == (0, 7)
    assert interval(("/", thread, ("p", "unknown")), values) == (-INFINITY, INFINITY)
    assert interval(("inc", ("c", 2)), values) == (2, INFINITY)


def test_shared_arrays_are_read_per_dimension(indexing):
    """tile[TILE][TILE + 1] indexed [threadIdx.y][threadIdx.x], then transposed; line[TILE * 4]
    at threadIdx.x * 4 + 3: each subscript against its own dimension's length."""
    buffers = indexing["transpose"]
    assert (buffers["tile"].capacity, buffers["tile[1]"].capacity, buffers["line"].capacity) == \
        (16, 17, 64)
    fits = launch([4, 4], [16, 16], n=64)
    assert extents({k: buffers[k] for k in ("tile", "tile[1]", "line")}, fits) == \
        {"tile": 16, "tile[1]": 16, "line": 64}
    assert buffers["in"].extent(fits) == 64 * 64
    too_wide = launch([4, 4], [32, 8], n=64)
    assert buffers["tile"].extent(too_wide) == 32 > buffers["tile"].capacity
    assert buffers["line"].extent(too_wide) == 128 > buffers["line"].capacity


def test_a_loop_counting_down_from_a_constant(indexing):
    """A halving loop (stride = 64; stride > 0; stride /= 2) keeps its first value as the
    bound: ``s[i + stride]`` stays in a tile of 128."""
    assert extents({"s": indexing["halving"]["s"]}, launch([1], [64])) == {"s": 128}


def test_an_array_parameter_is_a_pointer_to_its_element(indexing):
    from migrator.harness.types import element_layout

    kernel = next(k for k in read_kernels(SOURCE).kernels if k.name == "planes")
    phi = kernel.parameters[0]
    assert (phi.kind, phi.element, phi.element_size) == ("pointer", "double[8][8]", 512)
    assert element_layout(phi.element) == ("f64", 64)
    assert indexing["planes"]["phi"].extent(launch([5], [8, 8], depth=3)) == 3


def test_a_cast_to_another_element_size_stops_the_reading(indexing):
    """``*(const char4 *)(data + 4 * i)`` reads 4 bytes at each char index: the indexes do not
    bound ``data`` (they would be 3 short); a cast keeping the element size changes nothing."""
    buffers = indexing["widened"]
    assert not buffers["data"].complete and "cast to const char4 *" in buffers["data"].note
    assert buffers["weights"].complete
    assert buffers["weights"].extent(launch([1], [32], n=10)) == 10
