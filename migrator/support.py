"""Support headers: small headers rocmigrate generates beside its output when a fix needs code
that HIP lacks on the target ROCm (e.g. a correct atomic add for ``__half``).

A fix requests one like any header, by its quoted name (``Fix(includes=('"rocmigrate_atomics.h"',))``);
the engine inserts ``#include "rocmigrate_atomics.h"`` once. Whoever writes the output (convert,
lint --fix) writes the headers that output includes into the same folder, rendered from
``templates/support/<name>.j2`` for the target settings. They are recorded in the incremental
cache like outputs, so they are rewritten when missing and removed when no output needs them.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from .fsutil import atomic_write
from .settings import Settings
from .versions import format_version

PREFIX = "rocmigrate_"


@functools.lru_cache(maxsize=1)
def available() -> tuple[str, ...]:
    """Names of the support headers rocmigrate can generate."""
    from importlib import resources

    folder = resources.files("templates") / "support"
    return tuple(sorted(entry.name[:-3] for entry in folder.iterdir()
                        if entry.name.startswith(PREFIX) and entry.name.endswith(".j2")))


@functools.lru_cache(maxsize=1)
def _include_pattern() -> re.Pattern:
    names = b"|".join(re.escape(name.encode()) for name in available()) or b"(?!)"
    return re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"(' + names + rb')"', re.MULTILINE)


def referenced(output: bytes) -> tuple[str, ...]:
    """The support headers ``output`` includes (sorted)."""
    if PREFIX.encode() not in output:
        return ()
    return tuple(sorted({m.group(1).decode() for m in _include_pattern().finditer(output)}))


@functools.lru_cache(maxsize=32)
def render(name: str, settings: Settings) -> bytes:
    from .templating import render as render_template

    return render_template(f"support/{name}.j2", rocm=settings.rocm,
                           rocm_text=format_version(settings.rocm),
                           wavefront_size=settings.wavefront_size).encode()


def write_beside(folder: Path, names: tuple[str, ...], settings: Settings) -> list[Path]:
    """Write the support headers ``names`` into ``folder`` (only those that differ); returns
    the paths written."""
    written = []
    for name in names:
        path = folder / name
        content = render(name, settings)
        if not (path.is_file() and path.read_bytes() == content):
            atomic_write(path, content)
            written.append(path)
    return written
