"""The one jinja2 environment, over the shipped ``templates`` package: every Markdown and HTML
output, the generated sources and headers. A template's text is kept as written (its final
newline too); values go in verbatim, except in an HTML template (``*.html.j2``), which escapes
every value that is not ``markupsafe.Markup``."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("templates", ""),
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                              autoescape=jinja2.select_autoescape(["html.j2"],
                                                                  default_for_string=False))


def render(name: str, **values) -> str:
    return environment().get_template(name).render(**values)
