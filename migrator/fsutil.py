"""File-system helpers: atomic writes and content hashes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def atomic_write(path: Path, data: bytes, mode_from: Path | None = None) -> None:
    """Write via a temporary file in the same folder and rename it over ``path``: readers see
    the old file or the new one, never a partial one."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode_from is not None:
            os.chmod(tmp, os.stat(mode_from).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
