"""The effort model: work is counted per **decision** and per **site**. Each finding of the
conversion falls in one class; a class costs some hours of a person at every site (the
mechanical part: apply the chosen port there, or review the tool's fix), and the classes that
need a person to decide how to port something (manual, blocker) cost hours once per decision:
one distinct thing to port (a rule code with its API, header or feature: ``CGM001``
``cg::reduce``), however many sites share it. What the tool fixes (a support shim included)
needs no decision. Defaults below; a team sets its own in ``[tool.rocmigrate.report]``
(``pyproject.toml``) or ``[report]`` (``.rocmigrate.toml``). Every estimate the report prints is
shown with the model that made it (``describe``).

Classes, from what the engine says about a finding (docs/report.md has the table):

- automatic: a conversion the tool makes (a rename, an include, a lowering, a launch);
  a person skims the diff;
- review (low): a fix the tool applied that changes more than a name (an argument rewrite, an
  AMD optimisation, a portability fix), or an optimisation it suggests;
- manual (medium): the conversion leaves it to a person (a marker, a fix it would not apply);
- blocker (high): nothing in the target ROCm to port to (no HIP equivalent, a HIP name newer
  than the target, a library without a drop-in: cuDNN, a header without counterpart), inline
  PTX, or a wave64 hazard the tool cannot fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CLASSES = ("automatic", "review", "manual", "blocker")
DECIDED = ("manual", "blocker")  # the classes whose code-hours price a decision
# per site, by class: the mechanical part (docs/report.md has the calibration)
DEFAULT_HOURS = {"automatic": 0.02, "review": 0.25, "manual": 0.25, "blocker": 0.5}
# per decision, by class: choosing (and writing once) how to port one distinct thing
DEFAULT_DECISION_HOURS = {"automatic": 0.0, "review": 0.0, "manual": 1.0, "blocker": 4.0}
# decisions that cost more than their class: inline PTX is rewritten by hand and re-validated; a
# cuDNN call becomes MIOpen's different API
DEFAULT_CODE_HOURS = {"PTX001": 8.0, "API004": 6.0}
# findings left unfixed under these codes have nothing in the target ROCm to port to
BLOCKER_CODES = frozenset({"API002", "API003", "API004", "HDR002", "PTX001", "CGM001",
                           "DPF001"})
DEFAULT_HOURS_PER_WEEK = 30.0  # focused migration hours of one person in a week
DEFAULT_BATCH_HOURS = 40.0  # full migration: a batch is about this much work
DEFAULT_PILOT_MODULES = 3  # at most this many self-contained units in the pilot
DEFAULT_PILOT_SHARE = 0.1  # the pilot's lines: at most this share of the tree's


class ModelError(Exception):
    """A report table in the configuration file that cannot be used."""


@dataclass(frozen=True)
class EffortModel:
    hours: dict = field(default_factory=lambda: dict(DEFAULT_HOURS))  # per site
    code_hours: dict = field(default_factory=lambda: dict(DEFAULT_CODE_HOURS))  # per decision
    code_class: dict = field(default_factory=dict)  # code -> class, overriding the engine's
    hours_per_week: float = DEFAULT_HOURS_PER_WEEK
    batch_hours: float = DEFAULT_BATCH_HOURS
    pilot_modules: int = DEFAULT_PILOT_MODULES
    source: str = "defaults"  # where it came from, shown with every estimate
    decision_hours: dict = field(default_factory=lambda: dict(DEFAULT_DECISION_HOURS))
    pilot_share: float = DEFAULT_PILOT_SHARE

    def classify(self, code: str, kind: str, fixed: bool, severity: str, family: str) -> str:
        """The class of one finding (see the module's docs)."""
        chosen = self.code_class.get(code)
        if chosen:
            return chosen
        if kind == "attention" or not fixed:  # a marker written for a person, or nothing
            if code in BLOCKER_CODES or (family == "wavefront" and severity != "info"):
                return "blocker"
        if fixed:
            return {"conversion": "automatic", "attention": "manual"}.get(kind, "review")
        if kind == "optimization":
            return "review"  # a suggestion, for the optimisation phase
        if kind in ("attention", "conversion") or severity in ("warning", "error"):
            return "manual"
        return "review"

    def cost(self, code: str, klass: str) -> float:
        """Hours at each site of a finding of ``code`` in ``klass``."""
        return self.hours[klass]

    def decision_cost(self, code: str, klass: str) -> float:
        """Hours of the one decision all sites of a ``code`` and symbol share (0: none
        needed, the tool fixed them or a person only reviews)."""
        if klass in DECIDED:
            return self.code_hours.get(code, self.decision_hours[klass])
        return self.decision_hours[klass]

    def weeks(self, hours: float) -> float:
        return hours / self.hours_per_week

    def describe(self) -> dict:
        """The model as the report shows it beside each estimate."""
        return {"source": self.source, "hours": dict(self.hours),
                "decision_hours": dict(self.decision_hours),
                "code_hours": dict(sorted(self.code_hours.items())),
                "code_class": dict(sorted(self.code_class.items())),
                "blocker_codes": sorted(BLOCKER_CODES), "hours_per_week": self.hours_per_week,
                "batch_hours": self.batch_hours, "pilot_modules": self.pilot_modules,
                "pilot_share": self.pilot_share}

    def summary_line(self) -> str:
        """One line naming the model: printed next to every total."""
        hours = ", ".join(f"{name} {self.hours[name]:g} h" for name in CLASSES)
        decided = ", ".join(f"{name} {self.decision_hours[name]:g} h" for name in CLASSES
                            if self.decision_hours[name])
        extra = ", ".join(f"{code} {value:g} h" for code, value in sorted(self.code_hours.items()))
        return (f"effort model ({self.source}): per decision (a distinct API, header or "
                f"feature to port) {decided or 'nothing'}"
                + (f" ({extra})" if extra else "")
                + f"; per site {hours}; {self.hours_per_week:g} h per person-week")


_KEYS = {"hours", "decision-hours", "code-hours", "code-class", "hours-per-week", "batch-hours",
         "pilot-share", "pilot-modules"}


def model_from_table(table, where: str) -> EffortModel:
    """The model a configuration's report table describes (``where``: the file, for messages);
    raises ModelError naming the bad key."""
    if not isinstance(table, dict):
        raise ModelError(f"{where}: report must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ModelError(f"{where}: report: unknown key {unknown[0]!r} (known keys: "
                         f"{', '.join(sorted(_KEYS))})")
    hours = _class_hours(table, "hours", DEFAULT_HOURS, where)
    decision_hours = _class_hours(table, "decision-hours", DEFAULT_DECISION_HOURS, where)
    code_hours = dict(DEFAULT_CODE_HOURS)
    for code, value in _table(table, "code-hours", where).items():
        code_hours[_code(code, "report.code-hours", where)] = _hours(
            value, f"report.code-hours.{code}", where)
    code_class = {}
    for code, value in _table(table, "code-class", where).items():
        if value not in CLASSES:
            raise ModelError(f"{where}: report.code-class.{code} must be one of "
                             f"{', '.join(CLASSES)}")
        code_class[_code(code, "report.code-class", where)] = value
    per_week = _hours(table.get("hours-per-week", DEFAULT_HOURS_PER_WEEK),
                      "report.hours-per-week", where)
    batch = _hours(table.get("batch-hours", DEFAULT_BATCH_HOURS), "report.batch-hours", where)
    if per_week <= 0 or batch <= 0:
        raise ModelError(f"{where}: report.hours-per-week and report.batch-hours must be above 0")
    pilot = table.get("pilot-modules", DEFAULT_PILOT_MODULES)
    if type(pilot) is not int or pilot < 1:
        raise ModelError(f"{where}: report.pilot-modules must be a whole number of at least 1")
    share = table.get("pilot-share", DEFAULT_PILOT_SHARE)
    if type(share) not in (int, float) or not 0 < share <= 1:
        raise ModelError(f"{where}: report.pilot-share must be a share of the tree's lines, "
                         "above 0 and at most 1 (0.1: a tenth)")
    return EffortModel(hours, code_hours, code_class, float(per_week), float(batch), pilot,
                       source=where, decision_hours=decision_hours, pilot_share=float(share))


def _class_hours(table: dict, key: str, defaults: dict, where: str) -> dict:
    """A table of hours per class (``hours``, ``decision-hours``) over its defaults."""
    hours = dict(defaults)
    for name, value in _table(table, key, where).items():
        if name not in CLASSES:
            raise ModelError(f"{where}: report.{key}: unknown class {name!r} (classes: "
                             f"{', '.join(CLASSES)})")
        hours[name] = _hours(value, f"report.{key}.{name}", where)
    return hours


def _table(table: dict, key: str, where: str) -> dict:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ModelError(f"{where}: report.{key} must be a table")
    return value


def _hours(value, name: str, where: str) -> float:
    if type(value) not in (int, float) or value < 0 or value != value or value == float("inf"):
        raise ModelError(f"{where}: {name} must be a number of hours (0 or more)")
    return float(value)


def _code(code: str, name: str, where: str) -> str:
    if not re.fullmatch(r"[A-Z]{3}[0-9]{3}", code):
        raise ModelError(f"{where}: {name}: {code!r} is not a rule code (like PTX001)")
    return code


def load_model(config_path, known_codes) -> EffortModel:
    """The model of the configuration file the workspace chose (None: the defaults); a code in
    it that no rule has is an error (a typo would silently price nothing)."""
    from ..workspace.config import ConfigError, load_config

    if config_path is None:
        return EffortModel()
    try:
        values = load_config(config_path).values
    except ConfigError as err:
        raise ModelError(str(err)) from None
    if "report" not in values:
        return EffortModel()
    model = model_from_table(values["report"], str(config_path))
    known = set(known_codes)
    for name, codes in (("code-hours", model.code_hours), ("code-class", model.code_class)):
        unknown = sorted(set(codes) - known - set(DEFAULT_CODE_HOURS))
        if unknown:
            raise ModelError(f"{config_path}: report.{name}: no rule has the code "
                             f"{unknown[0]!r} (`rocmigrate rule --all` lists them)")
    return model


_NAME = re.compile(r"[A-Za-z_][\w:.<>/+-]*")


# codes that report a library without a drop-in (its API, headers, link): porting the library
# (cuDNN to MIOpen) is one decision, not one per symbol
LIBRARY_CODES = frozenset({"API004", "HDR002", "MKF007"})
_NOT_A_LIBRARY = frozenset({"", "runtime", "driver", "device", "build files"})
# a library's names as findings give them: its link name (-lnvidia-ml) and its own (NVML's API)
_LIBRARY_ALIASES = {"nvidia-ml": "nvml"}
# families whose findings name the API, header or function to port (one decision per name);
# the others' (streams, transfers, atomics, wave64 hazards, build flags) name a variable, an
# operator or a flag: their sites share one way to port, one decision per rule code
_NAMING_FAMILIES = frozenset({"api", "portability"})


def decision_key(code: str, symbol: str, library: str = "", family: str = "") -> tuple[str, str]:
    """What makes findings one decision. A library without a drop-in is one (``API004`` and
    the library) for all its symbols, headers and links. A missing API, header or feature
    (the blocker codes), or another API or function a person must port by hand, is one per
    name (``CGM001`` ``cg::reduce``). A code whose findings name a variable, an operator or a
    flag (a transfer, a stream, a wave64 hazard, a build flag) is one decision per code: its
    sites share one way to port."""
    if code in LIBRARY_CODES and library not in _NOT_A_LIBRARY:
        return "API004", f"library {_LIBRARY_ALIASES.get(library, library)}"
    symbol = symbol.strip()
    named = code in BLOCKER_CODES or family in _NAMING_FAMILIES
    return code, symbol if named and _NAME.fullmatch(symbol) else ""


def decision_of(model: EffortModel, code: str, klass: str, symbol: str, library: str,
                family: str) -> tuple[tuple[str, str], float] | None:
    """The decision a finding needs (``decision_key``) and its cost, or None: the tool fixed
    it, or its class needs no decision under ``model``."""
    if klass == "automatic" or model.decision_cost(code, klass) <= 0:
        return None
    key = decision_key(code, symbol, library, family)
    return key, model.decision_cost(key[0], klass)


def decisions(records: list[dict], model: EffortModel, family_of: dict) -> list[dict]:
    """The distinct decisions the tree's findings need (a key of ``decision_key`` whose sites
    are in a class a person decides: manual or blocker, unfixed): each costed once, with its
    sites (and their mechanical hours), files and phase; most hours first."""
    found: dict[tuple[str, str], dict] = {}
    for record in records:
        for item in record["work"]:
            decided = decision_of(model, item["code"], item["class"], item["symbol"],
                                  item["library"], family_of.get(item["code"], ""))
            if decided is None:
                continue
            key, cost = decided
            entry = found.get(key)
            if entry is None:
                entry = found[key] = {"code": key[0], "symbol": key[1], "class": item["class"],
                                      "phase": item["phase"], "hours": cost, "sites": 0,
                                      "site_hours": 0.0, "paths": [], "message": item["message"]}
            elif (cost, CLASSES.index(item["class"])) > (entry["hours"],
                                                         CLASSES.index(entry["class"])):
                # sites of several classes: the dearest decides, the graver class on a tie
                entry.update({"class": item["class"], "hours": cost, "message": item["message"]})
            entry["sites"] += 1
            entry["site_hours"] += item["hours"]
            if not entry["paths"] or entry["paths"][-1] != record["path"]:
                entry["paths"].append(record["path"])
    result = []
    for entry in found.values():
        entry["site_hours"] = round(entry["site_hours"], 3)
        entry["files"] = len(entry["paths"])
        result.append(entry)
    result.sort(key=lambda d: (-(d["hours"] + d["site_hours"]), d["code"], d["symbol"]))
    return result


def tree_hours(rows, model: EffortModel, family_of: dict, optimizing) -> dict:
    """The tree's figures from its findings counted as ``(code, kind, fixed, severity, symbol,
    library, count)`` rows (the history's per-commit totals; ``decisions`` does the same from the
    report's records): findings per class, port and optimisation hours, decisions."""
    classes = dict.fromkeys(CLASSES, 0)
    hours = {"port": 0.0, "optimisation": 0.0}
    decided: dict[tuple[str, str], tuple[float, str]] = {}
    for code, kind, fixed, severity, symbol, library, count in rows:
        klass = model.classify(code, kind, fixed, severity, family_of.get(code, ""))
        phase = "optimisation" if code in optimizing else "port"
        classes[klass] += count
        hours[phase] += model.cost(code, klass) * count
        found = decision_of(model, code, klass, symbol, library, family_of.get(code, ""))
        if found is not None and found[1] > decided.get(found[0], (0.0, ""))[0]:
            decided[found[0]] = found[1], phase
    for cost, phase in decided.values():
        hours[phase] += cost
    return {"findings": classes, "hours_port": round(hours["port"], 3),
            "hours_optimisation": round(hours["optimisation"], 3),
            "decisions": sum(1 for _, phase in decided.values() if phase == "port")}
