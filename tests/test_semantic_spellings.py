"""migrator.semantic.spellings: API names in both spellings, from the tables."""

from __future__ import annotations

import re

from migrator import apitables
from migrator.semantic.spellings import alternation, cuda_and_hip, spellings


def test_cuda_and_hip_is_each_cuda_name_and_its_hip_name():
    tables = apitables.load()
    assert cuda_and_hip(tables, "cudaMemcpy", "cudaMallocHost") == {
        "cudaMemcpy", "hipMemcpy", "cudaMallocHost", "hipHostMalloc"}
    # spellings reads more names as the same HIP name: the driver API's, deprecated aliases
    assert cuda_and_hip(tables, "cudaFreeHost") < spellings(tables, "hipHostFree")
    assert cuda_and_hip(tables, "cudaDeviceSynchronize") == {
        "cudaDeviceSynchronize", "hipDeviceSynchronize"}
    # a name the tables do not convert is read as written
    assert cuda_and_hip(tables, "myMemcpy") == {"myMemcpy"}


def test_alternation_tries_the_longer_name_first():
    group = alternation(["hipMemcpy", "hipMemcpyAsync", "cudaMemcpy", "cudaMemcpyAsync"])
    assert group == b"(?:cudaMemcpyAsync|hipMemcpyAsync|cudaMemcpy|hipMemcpy)"
    assert re.match(group, b"hipMemcpyAsync(").group() == b"hipMemcpyAsync"
    assert alternation({"a.b", "a.b"}) == rb"(?:a\.b)"  # literal, each name once
