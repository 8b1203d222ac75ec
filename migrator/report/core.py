"""The report as one document: inventory, readiness and effort, phases, owners and history,
built from one scan of the tree (the engine's findings) and the evidence given. The JSON
renderer writes this document as it is (docs/report.md is its schema); HTML and Markdown
render from it."""

from __future__ import annotations

import datetime
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..fsutil import check_regular
from ..settings import Settings
from ..versions import format_version
from . import evidence as evidence_module
from .effort import CLASSES, EffortModel, decisions
from .inventory import (families, file_record, folders, libraries_needed, optimization_codes,
                        totals)
from .owners import find_owners
from .phases import plan
from .scan import scan_tree

SCHEMA_VERSION = 2  # 2: effort per decision and site, pilot units (docs/report.md)


class ReportError(Exception):
    """A usage problem with the whole report (a source that is not a folder...)."""


@dataclass(frozen=True)
class HistoryOptions:
    since: str | None = None  # a date git understands (2024-01-01, "3 months ago")
    every: int = 1  # every Nth commit
    limit: int | None = None  # at most this many commits (the newest kept); None: all


@dataclass(frozen=True)
class ReportOptions:
    source: Path
    report_dir: Path
    settings: Settings = Settings()
    model: EffortModel = field(default_factory=EffortModel)
    target_reason: str = ""
    # an unpinned target that followed the installed HIP (Workspace.target_warning), else ""
    target_warning: str = ""
    converted: Path | None = None
    build_report: Path | None = None
    validate_report: Path | None = None
    history: HistoryOptions | None = None
    jobs: int = 0


def build_report(options: ReportOptions, progress=None) -> dict:
    """The report document for ``options.source``. ``progress(line)`` gets a line per step."""
    say = progress or (lambda line: None)
    source = options.source
    if not source.is_dir():
        raise ReportError(f"{source} is not a folder" if source.exists()
                          else f"{source} does not exist")
    for given in (options.build_report, options.validate_report):
        try:
            if given is not None:
                check_regular(given, evidence_module.MAX_BYTES)  # before the work, not after
        except OSError as err:
            raise ReportError(f"{given}: cannot read: {err.strerror}") from None
    report_dir = options.report_dir.resolve()
    inside = report_dir.is_relative_to(source.resolve())
    say(f"reading {source} with the conversion rules at ROCm "
        f"{format_version(options.settings.rocm)}")
    # owners are read from git in a thread while the workers convert (git blame waits on git)
    with ThreadPoolExecutor(max_workers=1) as background:
        reading = []
        scan = scan_tree(source, options.settings, options.jobs, report_dir if inside else None,
                         started=lambda rels: reading.append(
                             background.submit(find_owners, source, rels, options.jobs)))
        say("reading owners from git")
        owners = reading[0].result() if reading else find_owners(source, [], options.jobs)
    model = options.model
    family_of, optimizing = families(), optimization_codes()
    records = [file_record(file, model, family_of, optimizing) for file in scan.files]
    for record in records:
        record["owner"] = owners.owner_of(record["path"])
        entry = owners.files.get(record["path"])
        record["owner_source"] = entry["source"] if entry else ""
        record["authors"] = entry["authors"] if entry else []
    hashes = {}
    if options.converted is not None:
        for record in records:
            hashes[record["path"]] = evidence_module.file_hash(source / record["path"])
    evidence = evidence_module.gather([r["path"] for r in records], options.converted,
                                      options.build_report,
                                      options.validate_report)
    libraries = libraries_needed(records, options.settings.roc)
    target = format_version(options.settings.rocm)
    decided = decisions(records, model, family_of)
    for decision in decided:
        decision["owners"] = sorted({owners.owner_of(p) for p in decision["paths"]} - {""})
    phases = plan(records, model, evidence, hashes, libraries, target, decided)
    total = totals(records)
    document = {
        "schema": SCHEMA_VERSION,
        "tool": "rocmigrate", "version": __version__,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": source.name or str(source),
        "target": {"rocm": target, "why": options.target_reason,
                   "warning": options.target_warning or None,
                   "wavefront_size": options.settings.wavefront_size,
                   "offload_archs": list(options.settings.offload_archs)},
        "model": model.describe(),
        "model_line": model.summary_line(),
        "summary": _summary(total, phases, model, libraries, decided),
        "inventory": {"totals": total, "folders": folders(records), "libraries": libraries},
        "files": records,
        "decisions": decided,
        "plan": phases,
        "owners": _owner_table(records, owners, phases, decided),
        "evidence": {"converted": str(options.converted) if options.converted else None,
                     "build_report": str(options.build_report) if options.build_report else None,
                     "validate_report": str(options.validate_report)
                     if options.validate_report else None},
        "commit": owners.head,
        "history": None,
        "notes": owners.notes + evidence.notes + [f"not read: {line}" for line in scan.skipped],
    }
    if options.history is not None:
        from .history import walk_history

        say("walking the history")
        document["history"] = walk_history(source, options, model, family_of, optimizing, say)
        document["notes"] += document["history"]["notes"]
    return document


def _summary(total: dict, phases: dict, model: EffortModel, libraries: list[dict],
             decided: list[dict]) -> dict:
    """The figures a lead takes away: hours are the decisions' (once each) plus the sites'."""
    findings = total["findings"]
    sites = total["hours"]
    person = findings["review"] + findings["manual"] + findings["blocker"]
    decision_hours = {phase: round(sum(d["hours"] for d in decided if d["phase"] == phase), 3)
                      for phase in ("port", "optimisation")}
    port = round(sites["port"] + decision_hours["port"], 3)
    return {"files": total["files"], "lines": total["lines"], "kernels": total["kernels"],
            "findings": findings,
            "automatic_share": round(findings["automatic"] / (findings["automatic"] + person), 4)
            if findings["automatic"] + person else 1.0,
            "hours_port": port,
            "hours_optimisation": round(sites["optimisation"] + decision_hours["optimisation"],
                                        3),
            "hours_decisions": decision_hours["port"], "hours_sites": sites["port"],
            "decisions": sum(1 for d in decided if d["phase"] == "port"),
            "blocker_decisions": sum(1 for d in decided
                                     if d["phase"] == "port" and d["class"] == "blocker"),
            "person_weeks": round(model.weeks(port), 2),
            "blockers": findings["blocker"],
            "libraries_without_drop_in": [lib["cuda"] for lib in libraries
                                          if lib["status"] != "mapped"],
            "current_phase": phases["current"],
            "next_blocked_by": [c["text"] for c in phases["next_blocked_by"]]}


def _placement(phases: dict) -> dict[str, tuple[str, int]]:
    """Where the plan puts each file: ("pilot", 0) or ("full migration", batch number)."""
    placed = {}
    for phase in phases["phases"]:
        if phase["name"] in ("pilot", "full migration"):
            for item in phase["work_items"]:
                for path in item["paths"]:
                    placed[path] = (phase["name"], item.get("batch", 0))
    return placed


OWNER_FINDINGS = 50  # findings listed per file in an owner's work list


def _owner_table(records: list[dict], owners, phases: dict, decided: list[dict]) -> dict:
    """Work grouped by owner, so a lead can hand it out: per person the totals, the decisions
    with sites in their files, and a work list (each owned file with its place in the plan,
    hours and the findings a person must see), in the plan's order."""
    people: dict[str, dict] = defaultdict(lambda: {"files": [], "lines": 0, "hours": 0.0,
                                                   **{name: 0 for name in CLASSES},
                                                   "work": []})
    placed = _placement(phases)
    order = {"pilot": 0, "full migration": 1}
    for record in records:
        if not record["owner"]:
            continue
        person = people[record["owner"]]
        person["files"].append(record["path"])
        person["lines"] += record["lines"]
        person["hours"] = round(person["hours"] + record["hours"]["port"], 3)
        for name in CLASSES:
            person[name] += record["findings"][name]
        phase, batch = placed.get(record["path"], ("", 0))
        port = [item for item in record["work"] if item["phase"] == "port"]
        person["work"].append({
            "path": record["path"], "phase": phase, "batch": batch,
            "hours": record["hours"]["port"],
            **{name: record["findings"][name] for name in CLASSES if name != "automatic"},
            "findings": [{"line": item["line"], "code": item["code"], "class": item["class"]}
                         for item in port[:OWNER_FINDINGS]],
            "more_findings": max(0, len(port) - OWNER_FINDINGS)})
    for name, person in people.items():
        person["decisions"] = [{"code": d["code"], "symbol": d["symbol"], "class": d["class"],
                                "hours": d["hours"], "sites": d["sites"]}
                               for d in decided if name in d["owners"]]
        person["work"].sort(key=lambda w: (order.get(w["phase"], 2), w["batch"], -w["hours"],
                                           w["path"]))
    return {"available": owners.available, "codeowners": owners.codeowners,
            "unowned_files": sum(1 for record in records if not record["owner"]),
            "people": [dict(value, name=name) for name, value in
                       sorted(people.items(), key=lambda item: (-item[1]["hours"], item[0]))]}
