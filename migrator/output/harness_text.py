"""Terminal summary of a `rocmigrate harness` run: one line per harness."""

from __future__ import annotations

from .terminal import escaped, quoted


def render_summary(report, written: list[str]) -> str:
    lines = []
    width = max((len(quoted(h.spec)) for h in report.harnesses), default=0)
    for outcome in report.harnesses:
        reason = f"  ({outcome.problems[0]})" if outcome.problems else ""
        kept = "  [spec edited by hand: kept]" if outcome.spec_status == "kept" else ""
        lines.append(f"{quoted(outcome.spec):<{width}}  {outcome.verdict}{reason}{kept}")
    counts = ", ".join(f"{n} {verdict}" for verdict, n in sorted(report.verdicts().items()))
    lines.append(f"rocmigrate harness: {counts or 'no kernel'}; report: "
                 f"{', '.join(map(quoted, written))}")
    return "\n".join(map(escaped, lines)) + "\n"
