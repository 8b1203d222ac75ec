"""Deterministic CUDA trees for the benchmarks, generated from template tables.

``generate_corpus`` writes the mixed tree (mostly plain C++, ``mixed.py``) and
``generate_dense_corpus`` the API-heavy one (``dense.py``); both share ``template.py``.
``replicated.py`` copies real code to a size: kernels/ with varied names (``probe``, API-dense)
and the corpus's small programs (``samples``, a samples-like tree). The same
arguments give the same bytes, so benchmark figures stay comparable across changes.
"""

from .dense import generate_dense_corpus
from .mixed import generate_corpus
from .replicated import generate_probe_corpus, generate_samples_corpus

__all__ = ["generate_corpus", "generate_dense_corpus", "generate_probe_corpus",
           "generate_samples_corpus"]
