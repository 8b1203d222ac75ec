"""The report as one self-contained HTML page (REPORT_DIR/report.html): inline CSS, a few
lines of inline script (sorting, a filter), charts as inline SVG; nothing is fetched, so the
page opens offline and can be mailed as it is. Rendered from templates/report/report.html.j2
(an HTML template: every path, message and name from the tree is escaped)."""

from __future__ import annotations

from ..templating import render
from .report_charts import CLASS_COLOURS, line_chart, stacked_bars

MAX_FOLDER_BARS = 15
FOLDED = {"decisions": 25, "history": 30, "folders": 40, "owner_work": 50, "file_work": 30}
"""Rows shown before a list folds (the rest in a closed <details>) or is cut (owner_work,
file_work: the rest in the JSON report), so a 1,000-file tree's page stays readable."""


def who(owner) -> str:
    """An owner as shown: a name, or the name of a (name, email) pair."""
    if isinstance(owner, (list, tuple)):
        return str(owner[0]) if owner else ""
    return str(owner or "")


def file_groups(document: dict) -> list[dict]:
    """The files by folder, each group with its totals (files, lines, findings for a person,
    port hours) for the line that stands for it while folded; folders in path order."""
    groups: dict[str, dict] = {}
    for record in document["files"]:
        folder = record.get("folder") or "."
        group = groups.setdefault(folder, {"path": folder, "files": [], "lines": 0,
                                           "review": 0, "manual": 0, "blocker": 0,
                                           "hours": 0.0})
        group["files"].append(record)
        group["lines"] += record["lines"]
        for name in ("review", "manual", "blocker"):
            group[name] += record["findings"][name]
        group["hours"] += record["hours"]["port"] + record["hours"]["optimisation"]
    return [groups[path] for path in sorted(groups)]


def charts(document: dict) -> dict:
    """The page's SVG charts, each as markup."""
    from markupsafe import Markup

    phases = [(phase["name"], phase["hours_by_class"]) for phase in document["plan"]["phases"]]
    folders = sorted(document["inventory"]["folders"], key=lambda f: -f["hours"]["port"])
    made = {
        "phases": stacked_bars(phases, CLASS_COLOURS, "h",
                               "Effort per phase, hours by class of finding"),
        "folders": stacked_bars([(f["path"], f["hours_by_class"])
                                 for f in folders[:MAX_FOLDER_BARS]], CLASS_COLOURS, "h",
                                "Port effort per folder (the "
                                f"{min(len(folders), MAX_FOLDER_BARS)} largest)"),
        "burndown": "",
    }
    history = document.get("history") or {}
    if history.get("commits"):
        made["burndown"] = line_chart([(c["short"] + " " + c["date"][:10]
                                        + (" merge" if c.get("merge") else ""), c["hours_port"])
                                       for c in history["commits"]],
                                      "Burn-down: remaining port effort", "hours")
    return {name: Markup(svg) for name, svg in made.items()}


def render_html(document: dict) -> str:
    owners = document["owners"]
    note = next((n for n in document["notes"] if "git" in n or "repository" in n),
                "no git repository") if not owners["available"] else ""
    return render("report/report.html.j2", d=document, s=document["summary"],
                  charts=charts(document), owner_note=note, groups=file_groups(document),
                  folded=FOLDED, who=who)
