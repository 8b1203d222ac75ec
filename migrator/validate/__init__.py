"""`rocmigrate validate`: build a CUDA program and its HIP port, run both, compare.

``programs`` finds the programs under a source tree, ``compare`` holds the output contract and
the comparison rules, and ``run`` converts, builds, runs and judges. What it shares with
`rocmigrate harness` lives in ``migrator.toolchain``: how each side is built (``sides``), whether
each side can run here (``devices``), running a program within its time and output limits
(``process``) and the timing verdict (``timing``). The report renderers live in
``migrator.output``.
"""
