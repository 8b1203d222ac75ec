"""jinja2 environment over the shipped ``templates`` package."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("templates", ""),
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                              autoescape=False)


def render(name: str, **values) -> str:
    return environment().get_template(name).render(**values)
