"""Build-file rules: CMake scripts, Makefiles and shell build scripts migrated with the sources
(they read a migrator.buildfiles BuildContext; ``languages`` says which files).

Shared data: libraries.tsv (each CUDA library's HIP counterpart as a link name, a CMake package
and an imported target)."""
