"""Human-readable summary of a conversion run."""

from __future__ import annotations

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
    if summary["attention"]:
        lines.append("needs attention (marked in the output with '// rocmigrate CODE: ...'):")
        for entry in summary["attention"]:
            where = entry["locations"] if verbose else entry["locations"][:MAX_LOCATIONS]
            more = len(entry["locations"]) - len(where)
            lines.append(f"  {entry['code']} {entry['message']}  x{entry['count']}")
            lines.append("      at " + ", ".join(where) + (f" and {more} more" if more else ""))
    for failure in summary["failures"]:
        lines.append(f"FAILED {failure['path']}: {failure['error']}")
    for skipped in summary["skipped"]:
        lines.append(f"skipped {skipped['path']}: {skipped['reason']}")
    for stale in summary["removed_stale_outputs"]:
        lines.append(f"removed stale output {stale}")
    return "\n".join(lines) + "\n"
