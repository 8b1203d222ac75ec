"""rocmigrate: a CUDA to HIP migration assistant.

The engine (this package) knows how to parse, match, edit and report; what to find and how to
rewrite it lives in the ``rules`` package (API tables as data plus small rule modules).
"""

__version__ = "0.1.0"
