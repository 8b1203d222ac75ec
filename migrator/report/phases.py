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

from ..workspace.units import HEADER_SUFFIXES
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


@dataclass(frozen=True)
class Pilot:
    """The pilot's choice: its units (each a translation unit with the project headers it
    includes, named by the translation unit), the files they hold, and the patterns."""

    units: list[str]
    unit_paths: dict[str, list[str]]  # each chosen unit's files (its translation unit first)
    paths: list[str]
    lines: int
    total_lines: int
    covered: set[str]
    everything: set[str]
    weight_covered: int
    weight_total: int
    over_budget: bool  # past the share: what fits it covers under half of the pattern weight


def self_contained_units(records: list[dict]) -> dict[str, list[str]]:
    """Each translation unit (a source file that is not a header) with the project files it
    includes, directly or not: a slice that builds on its own. A tree of headers only: each
    source file alone."""
    by_path = {r["path"]: r for r in records}
    sources = [r for r in records if r["kind"] == "source"]
    units = [r for r in sources if not r["path"].lower().endswith(HEADER_SUFFIXES)] or sources
    result = {}
    for record in units:
        closure, queue = [record["path"]], [record["path"]]
        while queue:
            for included in by_path[queue.pop()]["includes"]:
                if included in by_path and included not in closure:
                    closure.append(included)
                    queue.append(included)
        result[record["path"]] = closure
    return result


def choose_pilot(records: list[dict], limit: int, share: float) -> Pilot:
    """The pilot: at most ``limit`` self-contained units and at most ``share`` of the tree's
    lines, chosen greedily: each step takes the unit that adds the most weight of patterns not
    yet covered per line (a pattern weighs the number of files that use it, so the tree's
    main APIs and kernels count most; a unit smaller than the median one counts as the
    median's lines, else a few trivial units make the pilot). When what fits the share covers
    less than half of the pattern weight units can cover, the greedy goes on past the share
    until it does (``over_budget``: the tree has no smaller representative slice)."""
    by_path = {r["path"]: r for r in records}
    units = self_contained_units(records)
    total_lines = sum(r["lines"] for r in records)
    file_patterns = {path: patterns_of(record) for path, record in by_path.items()}
    weight: dict[str, int] = {}
    for found in file_patterns.values():
        for pattern in found:
            weight[pattern] = weight.get(pattern, 0) + 1
    patterns = {name: set().union(*(file_patterns[p] for p in paths))
                for name, paths in units.items()}
    lines = {name: sum(by_path[p]["lines"] for p in paths) for name, paths in units.items()}
    floor = max(1, statistics.median_low(lines.values())) if lines else 1
    budget = share * total_lines
    covered: set[str] = set()
    chosen: list[str] = []
    taken: list[str] = []

    def gain(name: str) -> int:
        return sum(weight[p] for p in patterns[name] - covered)

    def rank(name: str) -> tuple:
        return gain(name) / max(floor, lines[name]), -lines[name], name

    reachable = sum(weight[p] for p in set().union(*patterns.values())) if patterns else 0

    def take(name: str) -> None:
        chosen.append(name)
        covered.update(patterns[name])
        taken.extend(p for p in units[name] if p not in taken)

    while len(chosen) < limit:  # within the share
        used = sum(by_path[p]["lines"] for p in taken)
        fitting = [name for name in units if name not in chosen and gain(name)
                   and used + sum(by_path[p]["lines"] for p in units[name]
                                  if p not in taken) <= budget]
        if not fitting:
            break
        take(max(fitting, key=rank))
    over_budget = False
    # a pilot must show the tree's main work: when the slices within the share cover less
    # than half of what units can cover, go on past the share (and say so)
    while len(chosen) < limit and 2 * sum(weight[p] for p in covered) < reachable:
        best = max((name for name in units if name not in chosen and gain(name)), key=rank,
                   default=None)
        if best is None:
            break
        take(best)
        over_budget = True
    everything = set(weight)
    return Pilot(chosen, {name: units[name] for name in chosen}, taken,
                 sum(by_path[p]["lines"] for p in taken), total_lines, covered,
                 everything, sum(weight[p] for p in covered), sum(weight.values()), over_budget)


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


def _built_state(paths: list[str], evidence: Evidence, whole: bool = False) -> tuple:
    """Built, on evidence: every translation unit among ``paths`` the build report names
    built (``whole``: and every target of the build); a failed build whose errors name none
    of them proves nothing about them."""
    if evidence.build_ok is None:
        return UNKNOWN, "no build report given (--build-report build.json of rocmigrate build)"
    built = evidence.built or {}
    broken = [p for p in paths if built.get(p) is False]
    failed = evidence.failed_targets
    if whole and not evidence.build_ok:
        what = (f"{evidence.targets - evidence.targets_built} of {evidence.targets} targets "
                "failed" if evidence.targets else "the build failed")
        return NOT_MET, what + (f" (first: {failed[0]})" if failed else "") + (
            f"; {_count(broken, 'file')} with errors (first: {broken[0]})" if broken else "")
    if broken:
        return NOT_MET, f"{_count(broken, 'file')} not built (first: {broken[0]})"
    units = [p for p in paths if p in built]
    if evidence.build_ok:
        return MET, (f"the build report says everything built ({evidence.targets} targets)"
                     if evidence.targets else "the build report says everything built")
    if not units:
        return UNKNOWN, ("the build failed (" + (failed[0] if failed else "no target built")
                         + ") before any of these files was compiled: no evidence")
    return MET, (f"{_count(units, 'translation unit')} built (the build failed elsewhere: "
                 f"{failed[0] if failed else 'other targets'})")


def _validated_state(paths: list[str], evidence: Evidence, timings: bool = False) -> tuple:
    """Validated, on evidence: the validate report's programs among ``paths`` ran and pass
    (``timings``: ran with timings recorded); a report in which none ran is no evidence."""
    if evidence.validated is None:
        return UNKNOWN, "no validate report given (--validate-report FILE)"
    programs = [p for p in paths if p in evidence.validated]
    if not programs:
        return UNKNOWN, "the validate report covers none of these files' programs"
    ran = [p for p in programs if p in evidence.ran]
    if not ran:
        return NOT_MET, (f"none of {_count(programs, 'program')} ran (first: {programs[0]}: "
                         f"{evidence.validated[programs[0]]})")
    if timings:
        untimed = [p for p in programs if p not in evidence.timed]
        return (NOT_MET, f"{len(untimed)} of {_count(programs, 'program')} without timings "
                         f"(first: {untimed[0]}: {evidence.validated[untimed[0]]})") \
            if untimed else (MET, f"timings recorded for {_count(programs, 'program')}")
    bad = [p for p in programs if evidence.validated[p] != "pass"]
    if bad:
        return NOT_MET, (f"{len(bad)} of {len(programs)} programs do not pass (first: {bad[0]}: "
                         f"{evidence.validated[bad[0]]})")
    return MET, f"{_count(programs, 'program')} ran and pass"


def _items_of(records: list[dict], phase: str) -> list[dict]:
    """A file's findings for ``phase`` as work items (file, line, code, class, hours)."""
    return [dict(item, path=record["path"]) for record in records for item in record["work"]
            if item["phase"] == phase]


def plan(records: list[dict], model: EffortModel, evidence: Evidence,
         hashes: dict[str, str], libraries: list[dict], target: str,
         decided: list[dict]) -> dict:
    """The four phases, the pilot's choice and where the team stands; ``decided``: the
    tree's decisions (effort.decisions), costed in preparation."""
    usable = [r for r in records if r["status"] != "failed"]
    pilot = choose_pilot(usable, model.pilot_modules, model.pilot_share)
    in_pilot = set(pilot.paths)
    units = modules([r for r in usable if r["path"] not in in_pilot])
    tree = _Tree(records, units, evidence, hashes)
    phases = [_preparation(records, libraries, target, decided),
              _pilot(tree, pilot),
              _full_migration(tree, batches(units, list(units), model.batch_hours), in_pilot),
              _optimisation(records, evidence, decided)]
    current = next((phase for phase in phases if phase["status"] != "done"), None)
    return {"phases": phases,
            "current": current["name"] if current else "done",
            "next_blocked_by": _open_criteria(current),
            "pilot": _pilot_summary(pilot, model),
            "modules": len(units)}


PILOT_RULE = ("at most {limit} self-contained units (a translation unit with the project "
              "files it includes) and at most {share:.0%} of the tree's lines, chosen "
              "greedily by the weight of patterns not yet covered (rule codes, libraries, "
              "kernels, warp intrinsics...; each weighs the number of files that use it) per "
              "line")


def _pilot_summary(pilot: Pilot, model: EffortModel) -> dict:
    """The pilot's choice (choose_pilot): its units, lines against the tree's, the patterns."""
    return {"modules": pilot.units, "paths": pilot.paths,
            "rule": PILOT_RULE.format(limit=model.pilot_modules, share=model.pilot_share),
            "patterns_covered": len(pilot.covered), "patterns_total": len(pilot.everything),
            "weight_covered": pilot.weight_covered, "weight_total": pilot.weight_total,
            "lines": pilot.lines, "total_lines": pilot.total_lines,
            "share": round(pilot.lines / pilot.total_lines, 4) if pilot.total_lines else 0.0,
            "over_budget": pilot.over_budget,
            "uncovered": sorted(pilot.everything - pilot.covered)}


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
                 validated: str, whole: bool = False) -> list[dict]:
        """The exit criteria of work on ``paths``: converted, built, validated (their texts;
        ``whole``: the whole port, so every target of the build must have built)."""
        evidence = self.evidence
        return [_criterion(converted, *_converted_state(paths, self.hashes, evidence)),
                _criterion(builds, *_built_state(paths, evidence, whole)),
                _criterion(validated, *_validated_state(paths, evidence))]

    def started(self, paths) -> bool:
        """Was any of ``paths`` converted?"""
        converted = self.evidence.converted
        return converted is not None and any(p in converted for p in paths)


def _preparation(records: list[dict], libraries: list[dict], target: str,
                 decided: list[dict]) -> dict:
    """Preparation: the environment, the key kernels, the build files, the libraries and a
    decision on each distinct thing without a port (costed here, once each)."""
    blockers = [item for item in _items_of(records, "port") if item["class"] == "blocker"]
    port_decisions = [d for d in decided if d["phase"] == "port"]
    build_files = [r for r in records if r["kind"] == "build"]
    items = _preparation_items(records, libraries, target, build_files, port_decisions)
    criteria = _preparation_criteria(libraries, build_files, blockers, port_decisions)
    by_class = {name: round(sum(d["hours"] for d in port_decisions if d["class"] == name), 3)
                for name in CLASSES}
    return _phase("preparation", items, criteria, started=True, by_class=by_class)


def _preparation_items(records: list[dict], libraries: list[dict], target: str,
                       build_files: list[dict], decided: list[dict]) -> list[dict]:
    """The environment, the key kernels (most kernels and launches), the build files, the
    libraries on AMD, the decisions to make."""
    key_files = sorted((r for r in records if r["kernels"] or r["launches"]),
                       key=lambda r: (-(r["kernels"] + r["launches"]), r["path"]))[:5]
    blockers = [d for d in decided if d["class"] == "blocker"]
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
        {"title": f"decide how to port {_count(decided, 'distinct thing')} ({len(blockers)} "
                  f"blockers at ROCm {target}; "
                  f"{sum(d['sites'] for d in decided)} sites, ported in their modules)",
         "decisions": decided[:200], "paths": sorted({p for d in decided for p in d["paths"]}),
         "hours": round(sum(d["hours"] for d in decided), 3)},
    ]


def _preparation_criteria(libraries: list[dict], build_files: list[dict],
                          blockers: list[dict], decided: list[dict]) -> list[dict]:
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
                   f"{_count([d for d in decided if d['class'] == 'blocker'], 'decision')} "
                   f"for {_count(blockers, 'blocker site')} in "
                   f"{_count({b['path'] for b in blockers}, 'file')}" if blockers else ""),
    ]


def _pilot(tree: _Tree, pilot: Pilot) -> dict:
    """The pilot: its units, converted, built, validated and timed."""
    by_path = {r["path"]: r for r in tree.records}
    seen: set[str] = set()
    items = []
    for name in pilot.units:
        own = [p for p in pilot.unit_paths[name] if p not in seen]
        seen.update(own)
        group = [by_path[p] for p in own]
        items.append({"title": f"pilot unit {name} ({_count(own, 'file')}, "
                               f"{sum(r['lines'] for r in group)} lines)",
                      "paths": own, "patterns": sorted(set().union(*map(patterns_of, group))),
                      "hours": round(_hours(group), 3),
                      "findings": _items_of(group, "port")[:200]})
    criteria = tree.criteria(pilot.paths, "pilot converted", "pilot builds",
                             "pilot validated against the CUDA original")
    criteria.append(_criterion("performance baseline recorded",
                               *_validated_state(pilot.paths, tree.evidence, timings=True)))
    return _phase("pilot", items, criteria, started=tree.started(pilot.paths),
                  by_class=_class_hours([by_path[p] for p in pilot.paths]))


def _full_migration(tree: _Tree, batch_list: list[list[str]], in_pilot: set[str]) -> dict:
    """The full migration: the other modules in batches; every file converted, built and
    validated."""
    units = tree.units
    all_paths = [r["path"] for r in tree.records]
    items = [{"title": f"batch {number}: {len(names)} module{'s' * (len(names) != 1)}",
              "batch": number, "modules": names, "paths": tree.paths(names),
              "hours": round(sum(_hours(units[name]) for name in names), 3),
              "findings": [item for name in names
                           for item in _items_of(units[name], "port")][:200]}
             for number, names in enumerate(batch_list, 1)]
    criteria = tree.criteria(all_paths, "every file converted", "the port builds",
                             "every program validated", whole=True)
    return _phase("full migration", items, criteria,
                  started=tree.started(p for p in all_paths if p not in in_pilot),
                  by_class=_class_hours([r for r in tree.records if r["path"] not in in_pilot]))


def _optimisation(records: list[dict], evidence: Evidence, decided: list[dict]) -> dict:
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
    decisions = [d for d in decided if d["phase"] == "optimisation"]
    if decisions:
        items.append({"title": f"decide {_count(decisions, 'optimisation')} the tool left to a "
                               "person", "decisions": decisions[:200],
                      "paths": sorted({p for d in decisions for p in d["paths"]}),
                      "hours": round(sum(d["hours"] for d in decisions), 3)})
    by_class = {name: round(sum(i["hours"] for i in optimisation if i["class"] == name)
                            + sum(d["hours"] for d in decisions if d["class"] == name), 3)
                for name in CLASSES}
    return _phase("optimisation", items, [_none_slower(evidence)], started=False,
                  by_class=by_class)


def _none_slower(evidence: Evidence) -> dict:
    """The optimisation's exit criterion: no port slower than its original, on timed runs of
    every validated program."""
    text = "no port slower than its original"
    if evidence.validated is None:
        return _criterion(text, UNKNOWN, "no validate report given (--validate-report FILE)")
    programs = sorted(evidence.validated)
    timed = [p for p in programs if p in evidence.timed]
    slower = [p for p in programs if evidence.validated[p] == "slower"]
    if slower:
        return _criterion(text, NOT_MET, f"{_count(slower, 'program')} slower: "
                          + ", ".join(slower[:5]))
    if not timed:
        failed = sum(1 for p in programs if p not in evidence.ran)
        return _criterion(text, UNKNOWN, f"no timed run in the validate report ({failed} of "
                          f"{_count(programs, 'program')} did not run)" if programs else
                          "the validate report holds no program")
    untimed = [p for p in programs if p not in evidence.timed]
    if untimed:
        return _criterion(text, UNKNOWN, f"{len(untimed)} of {_count(programs, 'program')} "
                          f"not timed (first: {untimed[0]}: {evidence.validated[untimed[0]]})")
    return _criterion(text, MET, f"{_count(timed, 'program')} timed, none slower")


def _phase(name: str, items: list[dict], criteria: list[dict], started: bool,
           by_class: dict[str, float]) -> dict:
    hours = round(sum(item["hours"] for item in items), 3)
    return {"name": name, "hours": hours, "hours_by_class": by_class, "work_items": items,
            "exit_criteria": criteria, "status": _status(criteria, started)}


def _class_hours(records: list[dict]) -> dict[str, float]:
    return {name: round(sum(r["hours_by_class"][name] for r in records), 3) for name in CLASSES}
