"""`rocmigrate build`: compile a converted tree with hipcc and map its errors back to CUDA.

``hip`` reads the installed HIP (where hipcc is, its release: ``--rocm auto``).
"""
