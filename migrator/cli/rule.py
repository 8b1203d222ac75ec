"""`rocmigrate rule CODE` / `rocmigrate rule --all`: rule documentation from the registry."""

from __future__ import annotations

from typing import Optional

import typer

from . import app


@app.command()
def rule(
    code: Optional[str] = typer.Argument(None, help="Rule code, e.g. API001."),
    all_rules: bool = typer.Option(False, "--all", help="List every rule."),
) -> None:
    """Show a rule's documentation, or list all rules."""
    from .. import registry

    if all_rules or not code:
        for cls in registry.all_rules():
            codes = ",".join(cls.codes())
            typer.echo(f"{codes:<28} {cls.name:<26} fix:{cls.fix:<9} {cls.summary}")
        return
    cls = registry.find(code.upper())
    if cls is None:
        typer.echo(f"error: no rule {code}", err=True)
        raise typer.Exit(2)
    from ..templating import render

    typer.echo(render("rule_doc.md.j2", rule=cls, doc=cls.documentation()), nl=False)
