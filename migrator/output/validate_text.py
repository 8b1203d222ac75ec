"""Terminal summary of a `rocmigrate validate` run: one line per program and variant."""

from __future__ import annotations

from .terminal import escaped, quoted


def render_summary(report, written: list[str]) -> str:
    """A line per program and variant with the first reason for its verdict (or the first note
    on a timing that is noise or undecided), then the counts; without a GPU, why nothing ran
    (once, not on every line)."""
    lines = []
    width = max((len(quoted(p.name)) for p in report.programs), default=0)
    aside = f"not compared with the CUDA original: {report.original_not_run}"
    for program in report.programs:
        for variant, outcome in program.variants.items():
            reasons = outcome.problems or [note for note in outcome.notes if note != aside]
            reason = f"  ({reasons[0]})" if reasons and not report.not_run else ""
            lines.append(f"{quoted(program.name):<{width}}  {variant:<9}  {outcome.verdict}"
                         f"{reason}")
    if report.not_run:
        lines.append(f"nothing was run: {report.not_run} (--gpu or ROCMIGRATE_GPU overrides the "
                     "detection)")
    elif report.original_not_run:
        recorded = report.settings.get("reference")
        judged = (f"the ports were compared with its results recorded in {recorded}"
                  if recorded else "the ports were judged by their self-checks")
        lines.append(f"the CUDA original was not run ({report.original_not_run}): {judged}, "
                     "and the optimized one against the naive one")
    counts = ", ".join(f"{n} {verdict}" for verdict, n in sorted(report.verdicts().items()))
    lines.append(f"rocmigrate validate: {counts}; report: {', '.join(map(quoted, written))}")
    return "\n".join(map(escaped, lines)) + "\n"
