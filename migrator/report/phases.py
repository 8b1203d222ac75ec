"""The migration plan in four phases (preparation, pilot, full migration, optimisation), each
with work items linked to files and findings, an estimate under the effort model, exit
criteria checked against the tree and the evidence given (converted output, build and
validate reports), and a status.

Pilot modules are chosen by a greedy set cover: each step takes the module that adds the most
patterns not yet covered (rule codes, libraries, inline PTX, textures, warp intrinsics, build
languages) per line of code, until every pattern is covered or the model's pilot size is
reached. Full migration takes the other modules in batches, a module after the modules it
includes (the #include graph, cycles broken by effort), the cheapest first among those ready.
"""

from __future__ import annotations

import heapq
import statistics
from dataclasses import dataclass

from .effort import CLASSES, EffortModel
from .evidence import Evidence

MET, NOT_MET, UNKNOWN = "met", "not met", "unknown"


def modules(records: list[dict]) -> dict[str, list[dict]]:
    """The tree's modules: its folders; its files when they all sit in one folder."""
    folders = {record["folder"] for record in records}
    key = (lambda r: r["folder"]) if len(folders) > 1 else (lambda r: r["path"])
    grouped: dict[str, list[dict]] = {}
    for record in records:
        grouped.setdefault(key(record), []).append(record)
    return dict(sorted(grouped.items()))


def patterns_of(record: dict) -> set[str]:
    """What a file exercises that a pilot should cover once."""
    found = set(record["codes"])
    found.update(f"library:{name}" for name in record["references"])
    found.update(f"uses:{name}" for name in record["patterns"])
    for name in ("inline_ptx", "textures", "warp_intrinsics"):
        if record[name]:
            found.add(f"uses:{name.replace('_', '-')}")
    if record["kernels"]:
        found.add("uses:kernels")
    if record["kind"] == "build":
        found.add("build:" + ("cmake" if record["path"].lower().endswith(
            ("cmakelists.txt", ".cmake")) else "make"))
    return found


def choose_pilot(units: dict[str, list[dict]], limit: int) -> tuple[list[str], set[str], set[str]]:
    """(chosen modules in order, patterns they cover, all patterns): greedy set cover, most
    new patterns per line first (fewer lines, then the name, break ties). Only modules with
    source files are candidates: a folder of build files alone is no pilot (preparation
    lists the build files)."""
    patterns = {name: set().union(*map(patterns_of, group)) for name, group in units.items()}
    lines = {name: sum(r["lines"] for r in group) for name, group in units.items()}
    # a module smaller than the median one costs as much: else a few trivial modules, cheap
    # per pattern, make the pilot and show little
    floor = max(1, statistics.median_low(lines.values())) if lines else 1
    lines = {name: max(floor, count) for name, count in lines.items()}
    everything = set().union(*patterns.values()) if patterns else set()
    candidates = [name for name, group in units.items()
                  if any(r["kind"] == "source" for r in group)]
    covered: set[str] = set()
    chosen: list[str] = []
    while len(chosen) < limit and covered != everything:
        best = max((name for name in candidates
                    if name not in chosen and patterns[name] - covered),
                   key=lambda n: (len(patterns[n] - covered) / lines[n], -lines[n], n),
                   default=None)
        if best is None:
            break
        chosen.append(best)
        covered |= patterns[best]
    return chosen, covered, everything


def _module_of(units: dict[str, list[dict]]) -> dict[str, str]:
    return {record["path"]: name for name, group in units.items() for record in group}


def order_modules(units: dict[str, list[dict]], names: list[str]) -> list[str]:
    """``names`` with each module after the modules it includes (dependencies first), the
    cheapest ready one first; in a cycle, the cheapest module left goes next."""
    owner = _module_of(units)
    cost = {name: _hours(units[name]) for name in names}
    wanted = set(names)
    needs = {name: {owner[inc] for record in units[name] for inc in record["includes"]
                    if inc in owner and owner[inc] != name and owner[inc] in wanted}
             for name in names}
    dependents: dict[str, list[str]] = {name: [] for name in names}
    waiting = {name: len(needs[name]) for name in names}
    for name in names:
        for need in needs[name]:
            dependents[need].append(name)
    ready = [(cost[name], name) for name in names if not waiting[name]]
    heapq.heapify(ready)
    ordered: list[str] = []
    left = set(names)
    while left:
        if ready:
            pick = heapq.heappop(ready)[1]
        else:  # only cycles left
            pick = min(left, key=lambda n: (cost[n], n))
        left.remove(pick)
        ordered.append(pick)
        for dependent in dependents[pick]:
            waiting[dependent] -= 1
            if not waiting[dependent] and dependent in left:
                heapq.heappush(ready, (cost[dependent], dependent))
    return ordered


def _hours(group: list[dict]) -> float:
    return sum(r["hours"]["port"] for r in group)


def batches(units: dict[str, list[dict]], names: list[str], batch_hours: float) -> list[list[str]]:
    """Consecutive modules of ``order_modules`` in batches of at most ``batch_hours`` (a
    module larger than that is a batch of its own)."""
    result: list[list[str]] = []
    current: list[str] = []
    total = 0.0
    for name in order_modules(units, names):
        hours = _hours(units[name])
        if current and total + hours > batch_hours:
            result.append(current)
            current, total = [], 0.0
        current.append(name)
        total += hours
    if current:
        result.append(current)
    return result


def _criterion(text: str, state: str, detail: str = "", blocking: bool = False) -> dict:
    return {"text": text, "state": state, "detail": detail, "blocking": blocking}


def _count(items, noun: str) -> str:
    """``3 files``, ``1 file``."""
    return f"{len(items)} {noun}{'s' * (len(items) != 1)}"


def _status(criteria: list[dict], started: bool) -> str:
    states = [c["state"] for c in criteria]
    if all(state == MET for state in states):
        return "done"
    if any(c["state"] == NOT_MET and c["blocking"] for c in criteria):
        return "blocked"
    return "in progress" if started or MET in states else "not started"


def _converted_state(paths: list[str], hashes: dict[str, str], evidence: Evidence) -> tuple:
    if evidence.converted is None:
        return UNKNOWN, "no converted output given (--converted OUT)"
    missing = [p for p in paths if evidence.converted.get(p) is None]
    stale = [p for p in paths if p not in missing and evidence.converted[p] != hashes.get(p)]
    if not missing and not stale:
        return MET, f"{_count(paths, 'file')} converted from their current content"
    parts = []
    if missing:
        parts.append(f"{len(missing)} not converted (first: {missing[0]})")
    if stale:
        parts.append(f"{len(stale)} changed since converted (first: {stale[0]})")
    return NOT_MET, "; ".join(parts)


def _built_state(paths: list[str], evidence: Evidence) -> tuple:
    if evidence.build_ok is None:
        return UNKNOWN, "no build report given (--build-report build.json of rocmigrate build)"
    built = evidence.built or {}
    broken = [p for p in paths if built.get(p) is False]
    if broken:
        return NOT_MET, f"{_count(broken, 'file')} not built (first: {broken[0]})"
    if evidence.build_ok:
        return MET, "the build report says everything built"
    if evidence.unmapped_build_errors:
        return UNKNOWN, (f"the build failed with {evidence.unmapped_build_errors} errors the "
                         "report maps to no file")
    return MET, "no build error in these files (the build failed in others)"


def _validated_state(paths: list[str], evidence: Evidence, timings: bool = False) -> tuple:
    if evidence.validated is None:
        return UNKNOWN, "no validate report given (--validate-report FILE)"
    programs = [p for p in paths if p in evidence.validated]
    if not programs:
        return UNKNOWN, "the validate report covers none of these files' programs"
    if timings:
        untimed = [p for p in programs if p not in evidence.timed]
        return (NOT_MET, f"{_count(untimed, 'program')} without timings (first: {untimed[0]})") \
            if untimed else (MET, f"timings recorded for {len(programs)} programs")
    bad = [p for p in programs if evidence.validated[p] != "pass"]
    if bad:
        return NOT_MET, (f"{len(bad)} of {len(programs)} programs do not pass (first: {bad[0]}: "
                         f"{evidence.validated[bad[0]]})")
    return MET, f"{_count(programs, 'program')} pass"


def _items_of(records: list[dict], phase: str) -> list[dict]:
    """A file's findings for ``phase`` as work items (file, line, code, class, hours)."""
    return [dict(item, path=record["path"]) for record in records for item in record["work"]
            if item["phase"] == phase]


def plan(records: list[dict], model: EffortModel, evidence: Evidence,
         hashes: dict[str, str], libraries: list[dict], target: str) -> dict:
    """The four phases, the pilot's choice and where the team stands."""
    units = modules([r for r in records if r["status"] != "failed"])
    tree = _Tree(records, units, evidence, hashes)
    pilot, covered, everything = choose_pilot(units, model.pilot_modules)
    rest = [name for name in units if name not in pilot]
    phases = [_preparation(records, libraries, target),
              _pilot(tree, pilot),
              _full_migration(tree, batches(units, rest, model.batch_hours), pilot),
              _optimisation(records, evidence)]
    current = next((phase for phase in phases if phase["status"] != "done"), None)
    return {"phases": phases,
            "current": current["name"] if current else "done",
            "next_blocked_by": _open_criteria(current),
            "pilot": _pilot_summary(units, pilot, covered, everything),
            "modules": len(units)}


def _pilot_summary(units: dict[str, list[dict]], pilot: list[str], covered: set[str],
                   everything: set[str]) -> dict:
    """The pilot's choice (choose_pilot): its modules, lines and the patterns it covers."""
    return {"modules": pilot, "patterns_covered": len(covered),
            "patterns_total": len(everything),
            "lines": sum(r["lines"] for name in pilot for r in units[name]),
            "uncovered": sorted(everything - covered)}


def _open_criteria(phase: dict | None) -> list[dict]:
    """The exit criteria ``phase`` (the current one; None when all are done) has not met."""
    return [c for c in phase["exit_criteria"] if c["state"] != MET] if phase else []


@dataclass(frozen=True)
class _Tree:
    """What the pilot and the full migration are planned from: every file's record, the
    modules (of the files not failed), the evidence given and the files' current hashes."""

    records: list[dict]
    units: dict[str, list[dict]]
    evidence: Evidence
    hashes: dict[str, str]

    def paths(self, names: list[str]) -> list[str]:
        """The files of the modules ``names``."""
        return [r["path"] for name in names for r in self.units[name]]

    def criteria(self, paths: list[str], converted: str, builds: str,
                 validated: str) -> list[dict]:
        """The exit criteria of work on ``paths``: converted, built, validated (their texts)."""
        evidence = self.evidence
        return [_criterion(converted, *_converted_state(paths, self.hashes, evidence)),
                _criterion(builds, *_built_state(paths, evidence)),
                _criterion(validated, *_validated_state(paths, evidence))]

    def started(self, paths) -> bool:
        """Was any of ``paths`` converted?"""
        converted = self.evidence.converted
        return converted is not None and any(p in converted for p in paths)


def _preparation(records: list[dict], libraries: list[dict], target: str) -> dict:
    """Preparation: the environment, the key kernels, the build files, the libraries and a
    decision on each blocker."""
    blockers = [item for item in _items_of(records, "port") if item["class"] == "blocker"]
    build_files = [r for r in records if r["kind"] == "build"]
    items = _preparation_items(records, libraries, target, build_files, blockers)
    criteria = _preparation_criteria(libraries, build_files, blockers)
    return _phase("preparation", items, criteria, started=True,
                  by_class=dict.fromkeys(CLASSES, 0.0))


def _preparation_items(records: list[dict], libraries: list[dict], target: str,
                       build_files: list[dict], blockers: list[dict]) -> list[dict]:
    """The environment, the key kernels (most kernels and launches), the build files, the
    libraries on AMD, the blockers to decide."""
    key_files = sorted((r for r in records if r["kernels"] or r["launches"]),
                       key=lambda r: (-(r["kernels"] + r["launches"]), r["path"]))[:5]
    return [
        {"title": f"AMD build and benchmark environment for ROCm {target}", "paths": [],
         "hours": 0.0},
        {"title": "key kernels: " + (", ".join(f"{r['path']} ({r['kernels']} kernels, "
                                                f"{r['launches']} launches)" for r in key_files)
                                      or "none found"),
         "paths": [r["path"] for r in key_files], "hours": 0.0},
        {"title": f"build files: {len(build_files)} (their conversion is counted in their "
                  "modules)", "paths": [r["path"] for r in build_files], "hours": 0.0},
        {"title": "libraries on AMD: " + (", ".join(
            f"{lib['cuda']} -> {lib['amd'] or 'nothing to link'}" for lib in libraries)
            or "the HIP runtime only"), "paths": [], "hours": 0.0},
        {"title": f"decide each blocker ({len(blockers)}; their porting is counted in their "
                  "modules)", "findings": blockers[:200],
         "paths": sorted({b["path"] for b in blockers}), "hours": 0.0},
    ]


def _preparation_criteria(libraries: list[dict], build_files: list[dict],
                          blockers: list[dict]) -> list[dict]:
    """A build found, a counterpart for every library, a decision on every blocker."""
    marked = [lib for lib in libraries if lib["status"] != "mapped"]
    return [
        _criterion("build files found", MET if build_files else NOT_MET,
                   f"{_count(build_files, 'build file')}" if build_files else
                   "no CMakeLists.txt or Makefile: the port needs a build"),
        _criterion("every library the port needs has an AMD counterpart a build can use",
                   NOT_MET if marked else MET,
                   ", ".join(f"{lib['cuda']}: {lib['note']}" for lib in marked) or
                   f"{len(libraries)} mapped", blocking=bool(marked)),
        _criterion("no blocker left without a decision", NOT_MET if blockers else MET,
                   f"{_count(blockers, 'blocker finding')} in "
                   f"{_count({b['path'] for b in blockers}, 'file')}" if blockers else ""),
    ]


def _pilot(tree: _Tree, pilot: list[str]) -> dict:
    """The pilot: its modules, converted, built, validated and timed."""
    units = tree.units
    pilot_paths = tree.paths(pilot)
    in_pilot = set(pilot_paths)
    items = [{"title": f"pilot module {name}", "paths": tree.paths([name]),
              "patterns": sorted(set().union(*map(patterns_of, units[name]))),
              "hours": round(_hours(units[name]), 3),
              "findings": _items_of(units[name], "port")[:200]} for name in pilot]
    criteria = tree.criteria(pilot_paths, "pilot converted", "pilot builds",
                             "pilot validated against the CUDA original")
    criteria.append(_criterion("performance baseline recorded",
                               *_validated_state(pilot_paths, tree.evidence, timings=True)))
    return _phase("pilot", items, criteria, started=tree.started(pilot_paths),
                  by_class=_class_hours([r for r in tree.records if r["path"] in in_pilot]))


def _full_migration(tree: _Tree, batch_list: list[list[str]], pilot: list[str]) -> dict:
    """The full migration: the other modules in batches; every file converted, built and
    validated."""
    units = tree.units
    in_pilot = set(tree.paths(pilot))
    all_paths = [r["path"] for r in tree.records]
    items = [{"title": f"batch {number}: {len(names)} module{'s' * (len(names) != 1)}",
              "batch": number, "modules": names, "paths": tree.paths(names),
              "hours": round(sum(_hours(units[name]) for name in names), 3),
              "findings": [item for name in names
                           for item in _items_of(units[name], "port")][:200]}
             for number, names in enumerate(batch_list, 1)]
    criteria = tree.criteria(all_paths, "every file converted", "the port builds",
                             "every program validated")
    return _phase("full migration", items, criteria,
                  started=tree.started(p for p in all_paths if p not in in_pilot),
                  by_class=_class_hours([r for r in tree.records if r["path"] not in in_pilot]))


def _optimisation(records: list[dict], evidence: Evidence) -> dict:
    """Optimisation: the AMD rewrites and suggestions to review, the wave64 review; no port
    slower than its original."""
    optimisation = _items_of(records, "optimisation")
    wave = [item for item in _items_of(records, "port") if item["code"].startswith("WAV")]
    items = [{"title": "review the AMD optimisation rewrites and suggestions "
                       f"({len(optimisation)})", "findings": optimisation[:200],
              "paths": sorted({i["path"] for i in optimisation}),
              "hours": round(sum(i["hours"] for i in optimisation), 3)},
             {"title": f"wave64 review ({len(wave)} findings)", "findings": wave[:200],
              "paths": sorted({i["path"] for i in wave}), "hours": 0.0}]
    by_class = {name: round(sum(i["hours"] for i in optimisation if i["class"] == name), 3)
                for name in CLASSES}
    return _phase("optimisation", items, [_none_slower(evidence)], started=False,
                  by_class=by_class)


def _none_slower(evidence: Evidence) -> dict:
    """The optimisation's exit criterion: no port slower than its original."""
    slower = [p for p, verdict in (evidence.validated or {}).items() if verdict == "slower"]
    return _criterion("no port slower than its original",
                      UNKNOWN if evidence.validated is None else (NOT_MET if slower else MET),
                      ", ".join(slower[:5]) if slower else (
                          "no validate report given" if evidence.validated is None else ""))


def _phase(name: str, items: list[dict], criteria: list[dict], started: bool,
           by_class: dict[str, float]) -> dict:
    hours = round(sum(item["hours"] for item in items), 3)
    return {"name": name, "hours": hours, "hours_by_class": by_class, "work_items": items,
            "exit_criteria": criteria, "status": _status(criteria, started)}


def _class_hours(records: list[dict]) -> dict[str, float]:
    return {name: round(sum(r["hours_by_class"][name] for r in records), 3) for name in CLASSES}
