"""What produced an output, as one hash: the incremental cache's key on the code and data."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.lru_cache(maxsize=4)
def ruleset_digest(extra_dir: Path | None = None) -> str:
    """A hash of everything that decides what a conversion writes: the engine (migrator), the
    rules and their tables (rules), the templates, and a team's rules directory. The cache keys
    its entries on it, so an upgrade or an edited table row converts again (the package
    version alone stays the same between commits)."""
    import hashlib
    import os
    from importlib.util import find_spec

    # the packages' folders, found without running their __init__ (the re-run path loads no rule)
    folders = [Path(path) for name in ("migrator", "rules", "templates")
               for path in find_spec(name).submodule_search_locations]
    files = []
    for folder in folders + ([extra_dir] if extra_dir is not None else []):
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = [name for name in dirnames if name != "__pycache__"]
            files += [(os.path.relpath(os.path.join(dirpath, name), folder.parent), dirpath, name)
                      for name in filenames if name.endswith((".py", ".tsv", ".toml", ".j2"))]
    digest = hashlib.sha256()
    for rel, dirpath, name in sorted(files):
        with open(os.path.join(dirpath, name), "rb") as handle:
            digest.update(rel.encode() + b"\0" + handle.read() + b"\0")
    return digest.hexdigest()
