"""What the team has done, read from what the tool itself wrote: a converted output
(``OUT/.rocmigrate/cache.json``), a ``rocmigrate build`` JSON report and a ``rocmigrate
validate`` JSON report. All three are untrusted input: each is checked field by field, and
anything unexpected makes that piece of evidence unusable, with a note, never a crash."""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..fsutil import content_hash, read_inside, read_regular
from ..workspace.discovery import OUTPUT_MARK

MAX_BYTES = 64 * 1024 * 1024  # the most read of a build or validate report


@dataclass
class Evidence:
    converted: dict[str, str] | None = None  # source path -> hash its output was made from
    built: dict[str, bool] | None = None  # source path or program name -> built
    build_ok: bool | None = None
    unmapped_build_errors: int = 0  # errors of failed units the build report maps to no file
    targets: int = 0  # the build report's targets (CMake targets, make goals, file-by-file units)
    targets_built: int = 0
    failed_targets: list[str] = field(default_factory=list)  # "name: first error" of each
    validated: dict[str, str] | None = None  # program source path -> worst verdict
    timed: set[str] = field(default_factory=set)  # programs with timings recorded
    ran: set[str] = field(default_factory=set)  # programs whose port ran (pass, slower, mismatch)
    notes: list[str] = field(default_factory=list)

    def converted_current(self, rel: str, data_hash: str) -> bool | None:
        """Is the converted output of ``rel`` made from its current content? None: no output
        given."""
        if self.converted is None:
            return None
        return self.converted.get(rel) == data_hash


def gather(paths: list[str], converted: Path | None, build_json: Path | None,
           validate_json: Path | None) -> Evidence:
    """The evidence given, with its paths made the tree's (``paths``: the report's files)."""
    evidence = Evidence()
    if converted is not None:
        evidence.converted = _converted(converted, evidence.notes)
    if build_json is not None:
        document = _json(build_json, evidence.notes)
        if document is not None:
            _build(document, build_json, evidence)
    if validate_json is not None:
        document = _json(validate_json, evidence.notes)
        if document is not None:
            _validate(document, validate_json, evidence)
    for name, option in (("converted", "--converted"), ("built", "--build-report"),
                         ("validated", "--validate-report")):
        found = getattr(evidence, name)
        if found:
            aligned, note = align_paths(found, paths)
            setattr(evidence, name, aligned)
            if note:
                evidence.notes.append(f"{option}: {note}")
    if evidence.validated is not None:
        evidence.timed = set(align_paths(dict.fromkeys(evidence.timed, True), paths)[0])
        evidence.ran = set(align_paths(dict.fromkeys(evidence.ran, True), paths)[0])
    return evidence


def align_paths(found: dict[str, object], paths: list[str]) -> tuple[dict, str]:
    """``found`` (keyed by paths relative to the root the evidence was made from) keyed by the
    tree's ``paths``, and a note when the roots differ. The evidence may come from a folder
    above the tree (``convert project/`` while the report reads ``project/src``: its paths have
    a prefix too many) or below it (a prefix too few); the prefix that makes the most of its
    paths name a file of the tree wins, when it beats the paths as they are."""
    ours = set(paths)
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    votes: Counter = Counter()
    for theirs in found:
        for path in by_name.get(posixpath.basename(theirs), ()):
            if theirs.endswith("/" + path):
                votes["drop", theirs[:-len(path)]] += 1
            elif path.endswith("/" + theirs):
                votes["add", path[:-len(theirs)]] += 1
    exact = sum(1 for theirs in found if theirs in ours)
    if not votes or max(votes.values()) <= exact:
        return found, ""
    (how, prefix), _ = min(votes.items(), key=lambda item: (-item[1], len(item[0][1]), item[0]))
    if how == "drop":
        aligned = {theirs[len(prefix):]: value for theirs, value in found.items()
                   if theirs.startswith(prefix)}
        return aligned, (f"made from a folder above this tree: its paths under '{prefix}' "
                         f"are this tree's ({len(found) - len(aligned)} others left out)")
    return ({prefix + theirs: value for theirs, value in found.items()},
            f"made from the tree's folder '{prefix.rstrip('/')}': its paths are read under it")


def _json(path: Path, notes: list[str]):
    try:
        return json.loads(read_regular(path, MAX_BYTES))
    except OSError as err:
        notes.append(f"{path}: cannot read: {err.strerror}")
    except (ValueError, RecursionError):
        notes.append(f"{path}: not valid JSON, not read")
    return None


def _converted(out: Path, notes: list[str]) -> dict[str, str] | None:
    """The sources a converted output was made from, and their hashes (its cache)."""
    try:
        raw = read_inside(out, OUTPUT_MARK)
        stored = json.loads(raw) if raw is not None else None
    except (OSError, ValueError, RecursionError):
        stored = None
    files = stored.get("files") if type(stored) is dict else None
    if type(files) is not dict or not all(
            type(rel) is str and type(entry) is dict and type(entry.get("input")) is str
            for rel, entry in files.items()):
        notes.append(f"--converted {out}: no usable {OUTPUT_MARK} (not a rocmigrate output, or "
                     "its cache is damaged): conversion progress unknown")
        return None
    return {rel: entry["input"] for rel, entry in files.items()}


def _build(document, path: Path, evidence: Evidence) -> None:
    """A build report (build.json, schema_version 1: docs/build.md): the build's ``ok``, each
    translation unit built or not, and the source files its errors were mapped to."""
    summary = document.get("summary") if type(document) is dict else None
    if not (type(document) is dict and document.get("report") == "build"
            and document.get("schema_version") == 1 and type(summary) is dict
            and type(summary.get("ok")) is bool and type(document.get("units")) is list):
        evidence.notes.append(f"--build-report {path}: not a rocmigrate build report "
                              "(build.json, schema_version 1), not read")
        return
    evidence.build_ok = summary["ok"]
    for name in ("targets", "targets_built"):
        if type(summary.get(name)) is int and summary[name] >= 0:
            setattr(evidence, name, summary[name])
    built: dict[str, bool] = {}
    for unit in document["units"]:
        if type(unit) is not dict:
            continue
        name, ok = unit.get("name"), unit.get("built")
        if ok is False and type(name) is str and unit.get("kind") in (
                "configure", "target", "goal", "make", "translation unit"):
            errors = unit.get("errors") if type(unit.get("errors")) is list else []
            first = next((e["message"] for e in errors if type(e) is dict
                          and type(e.get("message")) is str), "")
            if not first and unit.get("timed_out") is True:
                first = "timed out"
            evidence.failed_targets.append(f"{name}: {first[:160]}" if first else name)
        if unit.get("kind") == "translation unit" and type(name) is str and type(ok) is bool:
            for alias in (name, name[:-4] + ".cu" if name.endswith(".hip") else name):
                built[alias] = built.get(alias, True) and ok
        errors = unit.get("errors") if type(unit.get("errors")) is list else []
        for error in errors:
            source = error.get("source_file") if type(error) is dict else None
            if type(source) is str and source:
                built[source] = False
            elif ok is False:
                evidence.unmapped_build_errors += 1
    evidence.built = built


_VERDICT_ORDER = ("failed", "mismatch", "slower", "built", "skipped", "pass")
_RAN = ("pass", "slower", "mismatch")  # verdicts of a port that ran to its end


def _validate(document, path: Path, evidence: Evidence) -> None:
    """A validate report (migrator/output/validate_json.py): each program's worst verdict,
    and whether timings were recorded."""
    ours = type(document) is dict and document.get("tool") == "rocmigrate"
    programs = document.get("programs") if ours else None
    if type(programs) is not list:
        evidence.notes.append(f"--validate-report {path}: not a rocmigrate validate report, "
                              "not read")
        return
    validated: dict[str, str] = {}
    for program in programs:
        if type(program) is not dict or type(program.get("source")) is not str or \
                type(program.get("variants")) is not dict:
            continue
        verdicts = [variant.get("verdict") for variant in program["variants"].values()
                    if type(variant) is dict and variant.get("verdict") in _VERDICT_ORDER]
        if not verdicts:
            continue
        validated[program["source"]] = min(verdicts, key=_VERDICT_ORDER.index)
        if any(verdict in _RAN for verdict in verdicts):
            evidence.ran.add(program["source"])
        if any(type(timing) is dict and isinstance(timing.get("port_ms"), (int, float))
               for variant in program["variants"].values() if type(variant) is dict
               for timing in (variant.get("timings") if type(variant.get("timings")) is list
                              else [])):
            evidence.timed.add(program["source"])
    evidence.validated = validated


def file_hash(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except OSError:
        return None
