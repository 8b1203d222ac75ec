"""Terminal summary of a `rocmigrate build` run: per build root, one line per unit and the first
errors of each unit that failed, mapped to the CUDA source; the missing libraries; a legend of
the marks used; the figures (targets built, translation units with errors)."""

from __future__ import annotations

from .terminal import escaped, quoted

APPROXIMATE = "(~)"
LOG_LINE = "|"
LEGEND = {APPROXIMATE: "the CUDA line is approximate: the conversion changed that line (the "
                       "error is on the line it became, or on one it added)",
          LOG_LINE: "the end of the unit's log: no error could be read from it"}


def render_summary(report, written: list[str]) -> str:
    lines: list[str] = []
    used: set[str] = set()
    grouped = len(report.roots) > 1 or any(root["path"] != "." for root in report.roots)
    width = max((len(quoted(unit.name)) for unit in report.units), default=0)
    roots = report.roots or [{"path": ".", "method": report.method, "log": "",
                              "units": list(range(len(report.units)))}]
    counted = {id(unit) for unit in report.targets}
    for root in roots:
        units = [report.units[index] for index in root["units"]]
        indent = "  " if grouped else ""
        if grouped:
            targets = [unit for unit in units if id(unit) in counted]
            lines.append(f"{root['path']} ({root['method']}): "
                         f"{sum(unit.built for unit in targets)} of {len(targets)} targets built"
                         + (f"; log {root['log']}" if root["log"] else ""))
        for unit in units:
            lines += _unit_lines(unit, width, indent, used)
    if report.missing:
        lines.append("missing libraries (what showed each; the targets that need it):")
        for entry in report.missing:
            installed = {True: "the installed HIP has it (look at the search paths)",
                         False: "not in the installed HIP",
                         None: "no ROCm library rocmigrate knows"}[entry["installed"]]
            asked = sorted(set(entry["asked_as"]) - {entry["library"]})
            lines.append(f"  {entry['library']}" + (f" (for {', '.join(asked)})" if asked else "")
                         + f": {installed}; {'; '.join(entry['evidence'])}")
            lines.append(f"    needed by: {', '.join(map(quoted, entry['targets']))}")
            if entry["note"]:
                lines.append(f"    {entry['note']}")
    for mark in sorted(used):
        lines.append(f"{mark} {LEGEND[mark]}")
    targets = report.targets
    translation = report.translation_units or {"total": 0, "with_errors": []}
    figures = f"{sum(unit.built for unit in targets)} of {len(targets)} targets built"
    if len(report.roots) > 1:
        figures += f" in {len(report.roots)} roots"
    unconfigured = sum(unit.kind == "configure" and not unit.built for unit in report.units)
    if unconfigured:  # its targets are unknown: not in the figures
        figures += (f"; {unconfigured} CMake configure step{'s' if unconfigured > 1 else ''} "
                    "failed (targets not known)")
    if translation["total"]:
        figures += (f"; {translation['total']} translation units, "
                    f"{len(translation['with_errors'])} with errors")
    lines.append(f"rocmigrate build: {figures} ({report.method}, HIP "
                 f"{report.hip['hip_version']}); report: {', '.join(map(quoted, written))}")
    return "\n".join(map(escaped, lines)) + "\n"


def _unit_lines(unit, width: int, indent: str, used: set[str]) -> list[str]:
    state = "built" if unit.built else "TIMED OUT" if unit.timed_out else "FAILED"
    lines = [f"{indent}{quoted(unit.name):<{width}}  {unit.kind:<16}  {state}"]
    for error in unit.errors[:3] if not unit.built else ():
        place = _where(error, used)
        lines.append(f"{indent}    {place + ': ' if place else ''}{error.message}")
        if error.explanation:
            lines.append(f"{indent}      {error.code + ': ' if error.code else ''}"
                         f"{error.explanation}")
    if not unit.built and unit.error_count > 3:
        lines.append(f"{indent}    ... {unit.error_count - 3} more errors (see the report)")
    if not unit.built and not unit.errors and unit.log_tail:
        used.add(LOG_LINE)
        lines.extend(f"{indent}    {LOG_LINE} {line}" for line in unit.log_tail.splitlines()[-5:])
    return lines


def _where(error, used: set[str]) -> str:
    """file:line of an error (the CUDA file's where known), else the file, else its kind."""
    if error.source_file and error.source_line:
        if not error.line_exact:
            used.add(APPROXIMATE)
        return f"{quoted(error.source_file)}:{error.source_line}" + (
            "" if error.line_exact else f" {APPROXIMATE}")
    file = error.output_file or error.file
    if file:
        return f"{quoted(file)}:{error.line}" if error.line is not None else quoted(file)
    return error.kind
