"""`rocmigrate build`: compile a converted tree with hipcc and map its errors back to CUDA.

Entry point: ``build(BuildOptions(...)) -> BuildReport`` (``run``). ``hip`` says what CMake needs
to find the installed HIP (``migrator.toolchain`` finds hipcc and reads its release), ``tree``
reads the converted tree (its untrusted cache, translation units, include folders, line maps),
``errors`` parses build logs and explains each error (a marker, an API the installed ROCm lacks).
The report renderers live in ``migrator.output.build_*``.
"""

from .run import BuildFailure, BuildOptions, BuildReport, build

__all__ = ["BuildFailure", "BuildOptions", "BuildReport", "build"]
