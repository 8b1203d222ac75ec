"""The report as Markdown (REPORT_DIR/report.md), for a wiki page or a pull-request comment:
short by default (summary, phases with their exit criteria, owners, the last commits of the
history); ``full`` adds the folders and every file with work for a person."""

from __future__ import annotations


_MARKS = {"met": "✅", "not met": "❌", "unknown": "❔"}


def _hours(value: float) -> str:
    return f"{value:.1f} h"


def render_markdown(document: dict, full: bool = False) -> str:
    s = document["summary"]
    out = [f"# Migration report: {document['source']} → ROCm {document['target']['rocm']}", "",
           f"{s['files']} files, {s['lines']:,} lines, {s['kernels']} kernels. "
           f"Port effort **{_hours(s['hours_port'])}** ({s['person_weeks']:.1f} person-weeks), "
           f"optimisation {_hours(s['hours_optimisation'])}; "
           f"{100 * s['automatic_share']:.0f} % of findings converted automatically; "
           f"**{s['blockers']} blockers**.", "",
           f"_Estimates under the {document['model_line']}._", ""]
    findings = ", ".join(f"{count} {name}" for name, count in s["findings"].items())
    out += [f"Findings: {findings}.", ""]
    if s["libraries_without_drop_in"]:
        out += ["Libraries without a drop-in on AMD: "
                + ", ".join(s["libraries_without_drop_in"]) + ".", ""]
    out += [f"**Now: {s['current_phase']}.**"
            + (" To finish it: " + "; ".join(s["next_blocked_by"]) + "." if s["next_blocked_by"]
               else ""), "", "## Phases", "",
            "| Phase | Status | Estimate | Exit criteria |", "|---|---|---|---|"]
    for phase in document["plan"]["phases"]:
        criteria = "<br>".join(f"{_MARKS[c['state']]} {c['text']}"
                               + (f" ({_cell(c['detail'])})" if c["detail"] else "")
                               for c in phase["exit_criteria"])
        out.append(f"| {phase['name']} | {phase['status']} | {_hours(phase['hours'])} | "
                   f"{_cell(criteria)} |")
    pilot = document["plan"]["pilot"]
    out += ["", f"Pilot modules: {', '.join(f'`{m}`' for m in pilot['modules']) or 'none'} "
            f"({pilot['lines']:,} lines, {pilot['patterns_covered']} of "
            f"{pilot['patterns_total']} patterns).", ""]
    owners = document["owners"]
    out += ["## Owners", ""]
    if not owners["available"]:
        out += ["No owners: the tree has no usable git history.", ""]
    else:
        out += ["| Owner | Files | Port hours | Review | Manual | Blockers |",
                "|---|---|---|---|---|---|"]
        people = owners["people"] if full else owners["people"][:10]
        out += [f"| {_cell(p['name'])} | {len(p['files'])} | {p['hours']:.1f} | {p['review']} | "
                f"{p['manual']} | {p['blocker']} |" for p in people]
        out.append("")
        if full:
            for person in people:
                out += [f"### {_cell(person['name'])}", ""]
                out += [f"- {_when(w)}: `{w['path']}`, {w['hours']:.1f} h"
                        + (": " + ", ".join(f"{f['code']}@{f['line']} {f['class']}"
                                            for f in w["findings"][:20])
                           if w["findings"] else "")
                        + (" …" if len(w["findings"]) > 20 or w["more_findings"] else "")
                        for w in person["work"]]
                out.append("")
    history = document.get("history")
    if history and history["commits"]:
        commits = history["commits"] if full else history["commits"][-5:]
        out += ["## Progress", "", "| Commit | Date | Port hours | Change |", "|---|---|---|---|"]
        out += [f"| `{c['short']}` | {c['date'][:10]} | {c['hours_port']:.1f} | "
                f"{c['delta_hours']:+.1f} |" for c in commits]
        out.append("")
    if full:
        out += ["## Folders", "",
                "| Folder | Files | Lines | Review | Manual | Blockers | Port hours |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| `{f['path']}` | {f['files']} | {f['lines']} | {f['findings']['review']} | "
                f"{f['findings']['manual']} | {f['findings']['blocker']} | "
                f"{f['hours']['port']:.2f} |"
                for f in document["inventory"]["folders"]]
        out += ["", "## Files with work for a person", ""]
        for record in document["files"]:
            if record["work"]:
                out.append(f"- `{record['path']}` ({record['owner'] or 'no owner'}): "
                           + ", ".join(f"{w['code']}@{w['line']} {w['class']}"
                                       for w in record["work"][:20])
                           + (" …" if len(record["work"]) > 20 else ""))
        out.append("")
    if document["notes"]:
        out += ["## Notes", ""] + [f"- {_cell(note)}" for note in document["notes"]] + [""]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _when(work: dict) -> str:
    """A file's place in the plan: pilot, batch N, or not planned (a file that failed)."""
    if work["phase"] == "pilot":
        return "pilot"
    return f"batch {work['batch']}" if work["batch"] else "not planned"
