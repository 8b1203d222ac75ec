"""The libclang front end: HIP code checked against a real HIP header tree, without ROCm, and
CUDA kernels read with their resolved types for generated harnesses.

Entry points: ``check_hip(path, hip_include)``: clang's own diagnostics for the host and device
sides of a HIP file, parsed ``-fsyntax-only`` for an AMD GPU against the headers under
``hip_include`` (a folder holding ``hip/``, e.g. an installed ROCm's ``include`` or a copy of
one). ``read_kernels(path, options)``: each ``__global__`` function of a CUDA file, its
template instantiations, parameter types and launch sites (``kernels``). Both need the
``libclang`` wheel and clang's builtin headers (``find_resource_dir``: any LLVM's
``lib/clang/<version>``; Debian's ``hipcc`` brings LLVM 15's).
"""

from __future__ import annotations

from .check import ClangError, ClangMessage, check_hip, find_resource_dir
from .kernels import (Field, Instantiation, Kernel, KernelReading, Launch, Parameter,
                      ReadOptions, read_kernels)

__all__ = ["ClangError", "ClangMessage", "Field", "Instantiation", "Kernel", "KernelReading", "Launch",
           "Parameter", "ReadOptions", "check_hip", "find_resource_dir", "read_kernels"]
