"""`rocmigrate harness`: a generated benchmark harness per kernel, on the CUDA original and on the
HIP port, built, run and compared.

Entry point: ``harness(HarnessOptions(...)) -> HarnessReport`` (``run``, one function per step).
``spec`` writes and reads the TOML specs a user may edit and keep, from the kernels the libclang
front end reads (``migrator.clang.kernels``) and the constants of their launch sites
(``sitevalues``); ``render`` turns a spec into the two harness sources (templates/harness);
``outputs`` reads the binary files harnesses write; ``compare`` judges them (``types``: the
element types, value ranges and tolerances). The report renderers live in
``migrator.output.harness_*``; the formats are documented in docs/kernel_harness.md.
"""

from .run import HarnessError, HarnessOptions, HarnessReport, harness

__all__ = ["HarnessError", "HarnessOptions", "HarnessReport", "harness"]
