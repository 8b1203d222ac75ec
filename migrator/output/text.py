"""Human-readable summary of a conversion run (and lint's findings), names quoted and control
characters escaped for the terminal (``terminal``)."""

from __future__ import annotations

from .terminal import escaped, quoted

MAX_LOCATIONS = 5


def render_summary(summary: dict, verbose: bool = False) -> str:
    files = summary["files"]
    lines = [
        "rocmigrate convert: "
        f"{files['converted']} converted, {files['unchanged']} unchanged"
        + (f", {files['cached']} up to date (cached)" if files["cached"] else "")
        + f", {files['copied']} copied, {files['skipped']} skipped, {files['failed']} failed"
        f" ({files['total']} files)"
    ]
    refs = summary["converted_references"]
    if refs:
        total = sum(refs.values())
        lines.append(f"references converted: {total} ("
                     + ", ".join(f"{lib} {count}" for lib, count in refs.items()) + ")")
    if summary["optimized"]:
        lines.append("AMD optimisations applied (convert --no-optimize leaves them out):")
        lines += _grouped(summary["optimized"], "title", verbose)
    if summary["fixed"]:
        lines.append("fixed for AMD:")
        lines += _grouped(summary["fixed"], "title", verbose)
    marked = [entry for entry in summary["attention"] if entry["marked"]]
    if marked:
        lines.append("needs attention (marked in the output with '// rocmigrate CODE: ...'):")
        lines += _grouped(marked, "message", verbose)
    unmarked = [entry for entry in summary["attention"] if not entry["marked"]]
    if unmarked:
        # reported only, or marked by an earlier run (a marker is written once)
        lines.append("needs attention (no marker written by this run):")
        lines += _grouped(unmarked, "message", verbose)
    for failure in summary["failures"]:
        lines.append(f"FAILED {quoted(failure['path'])}: {failure['error']}")
    for skipped in summary["skipped"]:
        lines.append(f"skipped {quoted(skipped['path'])}: {skipped['reason']}")
    for note in summary["notes"]:
        lines.append(f"note {quoted(note['path'])}: {note['note']}")
    for header in summary["support_headers_written"]:
        lines.append(f"wrote support header {quoted(header)}")
    for stale in summary["removed_stale_outputs"]:
        lines.append(f"removed stale output {quoted(stale)}")
    return "\n".join(map(escaped, lines)) + "\n"


def _grouped(entries: list[dict], text: str, verbose: bool) -> list[str]:
    """Two lines per entry: code, ``entry[text]`` and count; then where (the first few unless
    ``verbose``)."""
    lines = []
    for entry in entries:
        where = entry["locations"] if verbose else entry["locations"][:MAX_LOCATIONS]
        more = len(entry["locations"]) - len(where)
        lines.append(f"  {entry['code']} {entry[text]}  x{entry['count']}")
        lines.append("      at " + ", ".join(map(_located, where))
                     + (f" and {more} more" if more else ""))
    return lines


def _located(location: str) -> str:
    """``path:line:column`` with the path quoted where it must be."""
    path, _, place = location.rpartition(":")
    path, _, line = path.rpartition(":")
    return f"{quoted(path)}:{line}:{place}" if path else location


def render_findings(findings, failures, fixed_count: int, statistics: bool = False,
                    warning: str = "") -> str:
    """``path:line:col: CODE message`` lines, then a count; ``[*]`` marks a fix (``[unsafe]``
    one that needs --unsafe-fixes). A ``warning`` (an unpinned target: Workspace.target_warning)
    is the first line."""
    lines = [f"warning: {warning}"] if warning else []
    for f in findings:
        mark = ""
        if f.fix_title:
            mark = " [*]" if f.fix_applicability == "safe" else f" [{f.fix_applicability}]"
        title = f" (fix: {f.fix_title})" if f.fix_title else ""
        lines.append(f"{quoted(f.path)}:{f.line}:{f.column}: {f.code}{mark} {f.message}{title}")
    for failure in failures:
        lines.append(f"{quoted(failure.rel)}: error: {failure.message}")
    if statistics:
        from collections import Counter

        counts = Counter(f.code for f in findings)
        fixable = Counter(f.code for f in findings if f.fix_applicability == "safe")
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"{count:>6}  {code}  ({fixable[code]} fixable)")
    total = len(findings)
    safe = sum(1 for f in findings if f.fix_applicability == "safe")
    summary = f"Found {total} finding{'s' if total != 1 else ''}"
    if fixed_count:
        summary += f" remaining, {fixed_count} fixed"
    if safe:
        summary += f"; {safe} fixable with --fix"
    lines.append(summary + ("." if not failures else f"; {len(failures)} file(s) failed."))
    return "\n".join(map(escaped, lines)) + "\n"
