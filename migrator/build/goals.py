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

from .errors import MAKE_DIRECTORY

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
    has_prerequisites: bool = True  # ``dirs: ; mkdir bin`` has none: a step, maybe no target

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


def make_goals(database: str, requested: list[str] | None = None) -> list[Goal]:
    """The goals ``make`` builds, in the Makefile's order: those of ``requested`` (the
    command line's targets), else of the default goal; [] when the database names none."""
    default, rules = read_database(database)
    starts = requested or ([default] if default else [])
    if not starts:
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
        goals.append(Goal(name, rule is not None and rule.phony, depth == 0 and not requested,
                          rule is None or bool(rule.prerequisites)))

    for start in starts:
        add(start, 0)
    return goals


@dataclass(frozen=True)
class SubMake:
    """A make that a recipe ran (``$(MAKE) -C src build BUILDDIR=...``), read from the dry
    run's output: its folder, the targets and variables of its command line, and its own
    output (its database, and those of the makes it ran in turn)."""

    folder: str
    goals: tuple[str, ...]
    variables: tuple[str, ...]  # NAME=value, as its command line gave them
    output: str

    def goal_list(self) -> list[Goal]:
        return make_goals(self.output, list(self.goals))


def _sub_make(line: str) -> tuple[str, str] | None:
    """("Entering" or "Leaving", the folder) where ``line`` is one of a sub-make's lines around
    its output ("# make[1]: Entering directory '/a/src'" in make -p's; the top make's own,
    without a level, are not)."""
    moved = MAKE_DIRECTORY.match(line)
    if moved is None or moved.group("level") is None:
        return None
    return moved.group("way"), moved.group("folder")


_DATABASE_START = "# GNU Make "
_COMMAND_GOALS = re.compile(r"^MAKECMDGOALS :?= ?(.*)$", re.MULTILINE)
_COMMAND_VARIABLES = re.compile(r"^-\*-command-variables-\*- :?= ?(.*)$", re.MULTILINE)


def sub_makes(output: str) -> list[SubMake]:
    """The makes that ``output`` (``make -pn``'s) shows its recipes ran directly, in order;
    their own sub-makes stay in their output. Their variables are all of their command line's,
    those make passed down from the parent's among them."""
    found: list[SubMake] = []
    depth = 0
    folder, lines = "", []
    for line in output.splitlines():
        moved = _sub_make(line)
        if moved and moved[0] == "Entering":
            depth += 1
            if depth == 1:
                folder, lines = moved[1], []
                continue
        elif moved and depth:
            depth -= 1
            if depth == 0:
                text = "\n".join(lines) + "\n"
                goals = _COMMAND_GOALS.findall(text)
                variables = _COMMAND_VARIABLES.findall(text)
                found.append(SubMake(folder, tuple(goals[-1].split()) if goals else (),
                                     tuple(_words(variables[-1])) if variables else (), text))
                continue
        if depth:
            lines.append(line)
    return found


def only_runs_make(output: str, make: str) -> bool:
    """Whether the commands a dry run printed (``make -pn GOAL``'s, outside its sub-makes'
    output and before its database) are all makes (``make -C src build``): the goal then only
    stands for the goals of those makes."""
    names = {"make", "gmake", make, make.rsplit("/", 1)[-1]}
    depth, printed = 0, []
    for line in output.splitlines():
        moved = _sub_make(line)
        if moved and moved[0] == "Entering":
            depth += 1
        elif moved and depth:
            depth -= 1
        elif depth == 0:
            if line.startswith(_DATABASE_START):
                break
            if line.strip() and not line.startswith("#"):
                printed.append(line.split())
    return bool(printed) and all(_runs_make(words, names) for words in printed)


def _runs_make(words: list[str], names: set[str]) -> bool:
    """A printed command that runs make, after ``cd DIR &&`` or ``VAR=value`` words."""
    while words[:1] == ["cd"] and "&&" in words:
        words = words[words.index("&&") + 1:]
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]
    return bool(words) and words[0] in names


def _words(text: str) -> list[str]:
    """make's command-variables value split into NAME=value words (make escapes blanks in a
    value with a backslash)."""
    words, current, escaped = [], "", False
    for char in text.strip():
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            escaped = True
        elif char == " ":
            if current:
                words.append(current)
            current = ""
        else:
            current += char
    if current:
        words.append(current)
    return words


def failed_rules(log: str) -> set[str]:
    """The targets whose rule make reports failed, and those a missing prerequisite stopped."""
    failed = {match.group("target") for match in _FAILED_RULE.finditer(log)}
    failed.update(needed for _, needed in _NO_RULE.findall(log))
    return failed
