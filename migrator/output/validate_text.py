"""Terminal summary of a `rocmigrate validate` run: one line per program and variant."""

from __future__ import annotations


def render_summary(report, written: list[str]) -> str:
    lines = []
    width = max((len(p.name) for p in report.programs), default=0)
    for program in report.programs:
        for variant, outcome in program.variants.items():
            reason = f"  ({outcome.problems[0]})" if outcome.problems else ""
            lines.append(f"{program.name:<{width}}  {variant:<9}  {outcome.verdict}{reason}")
    counts = ", ".join(f"{n} {verdict}" for verdict, n in sorted(report.verdicts().items()))
    lines.append(f"rocmigrate validate: {counts}; report: {', '.join(written)}")
    return "\n".join(lines) + "\n"
