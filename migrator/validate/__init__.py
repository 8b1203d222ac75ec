"""`rocmigrate validate`: build a CUDA program and its HIP port, run both, compare.

``toolchain`` decides how the HIP side is built (``migrator.toolchain`` finds the compilers,
runs each program within its time and output limits and judges timings), ``devices`` says
whether each side can run here, ``programs`` finds the programs under a source tree, ``compare``
holds the output contract and the comparison rules, and ``run`` converts, builds, runs and
judges. The report renderers live in ``migrator.output``.
"""
