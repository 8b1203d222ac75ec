"""The goals of a Makefile, from make's own database (``make -pnq``), and the rules make says
failed.

A goal is what ``make`` with no target builds: the default goal, or, when that goal only stands
for others (``all: a b c``: phony, or with no recipe, neither its own nor a pattern rule's), its
prerequisites (such a prerequisite again stands for its own). Make reads
the Makefile itself (includes, variables, conditionals, ``$(wildcard)``): rocmigrate parses only
the database make prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# make's database after a dry run of the default goal: -n (print the recipes, run none but
# recursive $(MAKE) lines, themselves dry), -p (print the database); the implicit rule search
# done for each file considered says which files a pattern rule builds
DATABASE_ARGS = ("-pn",)
_DEFAULT_GOAL = re.compile(r"^\.DEFAULT_GOAL :?= ?(.*)$", re.MULTILINE)
_PHONY = "#  Phony target (prerequisite of .PHONY)."
_STEM = "#  Implicit/static pattern stem:"
_NOT_A_TARGET = "# Not a target:"
# make's line for a rule whose recipe failed: "make: *** [Makefile:48: gpu_burn] Error 1",
# before make 4.0 "make: *** [gpu_burn] Error 1"; in a sub-make "make[1]: *** [...]"
_FAILED_RULE = re.compile(r"^g?make(?:\[\d+\])?: \*\*\* \[(?:[^\]]*?:\d+: )?(?P<target>[^\]]+)\] "
                          r"Error", re.MULTILINE)
# a prerequisite make has no rule for: "make: *** No rule to make target 'x', needed by 'y'."
_NO_RULE = re.compile(r"\*\*\* No rule to make target [`']([^']+)', needed by [`']([^']+)'")
_MAX_DEPTH = 8  # phony goals standing for phony goals: how deep they are followed


@dataclass(frozen=True)
class Goal:
    name: str  # as make names it (a path relative to the Makefile's folder)
    phony: bool  # built when make reports no failure (no file to look for)
    default: bool = False  # the default goal itself (``all: x.cu`` with a recipe): a name for
    # the build, often no file (its recipe writes another), so none is looked for either

    @property
    def writes_file(self) -> bool:
        return not (self.phony or self.default)


@dataclass
class _Rule:
    prerequisites: list[str]
    phony: bool
    recipe: bool  # the rule has a recipe of its own, or a pattern rule's


def read_database(text: str) -> tuple[str | None, dict[str, _Rule]]:
    """The default goal and every target of the database's ``# Files`` section: its
    prerequisites (normal ones; order-only ones after ``|`` left out) and whether it is phony."""
    found = _DEFAULT_GOAL.findall(text)
    default = found[-1].strip() if found else None
    rules: dict[str, _Rule] = {}
    files_at = text.find("\n# Files\n")
    if files_at < 0:
        return default or None, rules
    lines = text[files_at:].splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line == _NOT_A_TARGET:
            index += 1  # the file make only mentions
            continue
        if not line or line.startswith(("#", "\t", " ")) or ":" not in line:
            continue
        name, _, rest = line.partition(":")
        if rest.startswith("=") or not name or " " in name.strip():
            continue  # a target-specific variable (name: VAR = value) or no name
        rest = rest.lstrip(":")
        prerequisites = rest.split("|", 1)[0].split()
        phony = stem = False
        while index < len(lines) and lines[index].startswith("#  "):
            phony = phony or lines[index] == _PHONY
            stem = stem or lines[index].startswith(_STEM)
            index += 1
        recipe = stem or (index < len(lines) and lines[index].startswith("\t"))
        rules[name.strip()] = _Rule(prerequisites, phony, recipe)
    return default or None, rules


def make_goals(database: str) -> list[Goal]:
    """The goals ``make`` with no target builds, in the Makefile's order; [] when the
    database names no default goal."""
    default, rules = read_database(database)
    if default is None:
        return []
    goals: list[Goal] = []
    seen: set[str] = set()

    def add(name: str, depth: int) -> None:
        if name in seen:
            return
        seen.add(name)
        rule = rules.get(name)
        stands_for_others = rule is not None and rule.prerequisites and (
            rule.phony or not rule.recipe)
        if stands_for_others and depth < _MAX_DEPTH:
            for prerequisite in rule.prerequisites:
                add(prerequisite, depth + 1)
            return
        goals.append(Goal(name, rule is not None and rule.phony, depth == 0))

    add(default, 0)
    return goals


def failed_rules(log: str) -> set[str]:
    """The targets whose rule make reports failed, and those a missing prerequisite stopped."""
    failed = {match.group("target") for match in _FAILED_RULE.finditer(log)}
    failed.update(needed for _, needed in _NO_RULE.findall(log))
    return failed
