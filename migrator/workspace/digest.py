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

    import migrator
    import rules
    import templates

    digest = hashlib.sha256()
    folders = [Path(package.__file__).parent for package in (migrator, rules, templates)]
    for folder in folders + ([extra_dir] if extra_dir is not None else []):
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".tsv", ".toml", ".j2") and path.is_file():
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
