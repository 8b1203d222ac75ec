"""`rocmigrate validate`: build a CUDA program and its HIP port, run both, compare.

``toolchain`` finds the compilers and decides how the HIP side is built, ``programs`` finds the
programs under a source tree, ``compare`` holds the output contract and the comparison rules,
``process`` runs one program within its time and output limits, and ``run`` converts, builds,
runs and judges. The report renderers live in ``migrator.output``.
"""
