"""Terminal summary of a `rocmigrate build` run: one line per unit, the first errors of each
unit that failed, mapped to the CUDA source."""

from __future__ import annotations

from .terminal import escaped, quoted


def render_summary(report, written: list[str]) -> str:
    lines = []
    width = max((len(quoted(unit.name)) for unit in report.units), default=0)
    for unit in report.units:
        state = "built" if unit.built else "TIMED OUT" if unit.timed_out else "FAILED"
        lines.append(f"{quoted(unit.name):<{width}}  {unit.kind:<16}  {state}")
        for error in unit.errors[:3] if not unit.built else ():
            lines.append(f"    {_where(error)}: {error.message}")
            if error.explanation:
                lines.append(f"      {error.code + ': ' if error.code else ''}{error.explanation}")
        if not unit.built and unit.error_count > 3:
            lines.append(f"    ... {unit.error_count - 3} more errors (see the report)")
        if not unit.built and not unit.errors and unit.log_tail:
            lines.extend(f"    | {line}" for line in unit.log_tail.splitlines()[-5:])
    built = sum(unit.built for unit in report.units)
    lines.append(f"rocmigrate build: {built} of {len(report.units)} built ({report.method}, "
                 f"HIP {report.hip['hip_version']}); report: {', '.join(map(quoted, written))}")
    return "\n".join(map(escaped, lines)) + "\n"


def _where(error) -> str:
    if error.source_file and error.source_line:
        return f"{quoted(error.source_file)}:{error.source_line}" + ("" if error.line_exact
                                                                     else " (~)")
    if error.output_file:
        return f"{quoted(error.output_file)}:{error.line}"
    return quoted(error.file) if error.file else error.kind
