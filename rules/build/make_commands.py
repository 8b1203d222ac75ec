"""What the Make and shell rules (rules/build/make_*.py) share: the file's assignments and
commands as words, where nvcc (or hipcc, once converted) runs, and which words it reads.

nvcc reads the words after it in a command (a recipe line, a script's line, one part of
``a && b``), the words after the compiler in a variable naming it (``NVCC = nvcc -O3``), and the
values of the variables those words name, transitively (``$(CFLAGS)`` -> ``CFLAGS :=
$(EXTRA) -arch=$(ARCH)`` -> ``EXTRA``). A variable named like a CUDA flag list (NVCCFLAGS,
CUDA_FLAGS, GENCODE_FLAGS...) counts even where no command shows it in use. Program
arguments (``./main -size 10``) and host compiler lines stay out. A make file's includers and
included make files (ctx.related) lend their compiler variables and commands: a fragment's
``NVCUFLAGS`` is nvcc's when the Makefile including it runs ``$(NVCC) $(NVCUFLAGS)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.buildfiles.make import Word
from migrator.diagnostics import Edit, Fix
from migrator.rule import Marker
from migrator.source import Source, SourceError

from .nvcc_flags import Translation, translate, unquote, variable_of

# nvcc as a word or a path's last part; hipcc too, so that a converted file reads the same
_COMPILER = re.compile(r"^(?:\S*/)?(?:nvcc|hipcc)(?:\.exe)?$")
_FLAG_VARIABLE = re.compile(r"^(?:\w*(?:NVCC|CUDA)\w*FLAGS\w*|CUFLAGS|NVFLAGS|GENCODE\w*)$",
                            re.IGNORECASE)
_SHELL_ASSIGNMENT = re.compile(rb"^([A-Za-z_][A-Za-z0-9_]*)\+?=")
_SEPARATORS = frozenset({b";", b"&&", b"||", b"|", b"&"})
# words that may come before a command's name (shell keywords and wrappers)
_PREFIXES = frozenset({b"do", b"then", b"else", b"elif", b"time", b"exec", b"!", b"{", b"(",
                       b"nice", b"env", b"command"})
_EVAL = re.compile(rb"\$\(eval[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\+|:|\?|::)?=[ \t]*")
# where a shell or make word may name a variable: $(NAME) ${NAME} $NAME
_REFERENCE = re.compile(rb"\$(?:\(([A-Za-z_][A-Za-z0-9_]*)\)|\{([A-Za-z_][A-Za-z0-9_]*)\}"
                        rb"|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True)
class Assignment:
    """A variable's definition: ``NAME op value`` (make) or ``NAME=value`` (shell). ``words``
    are the value's words (inside the quotes of a quoted shell value); ``name_start`` is where
    the name is written."""

    name: str
    name_start: int
    value_start: int
    value_end: int
    words: tuple[Word, ...]


@dataclass
class MakeView:
    """One Makefile or script, read once per round (kept in ctx.cache)."""

    assignments: list[Assignment]
    commands: list[tuple[Word, ...]]  # simple commands: recipe and script lines, split at ; && ||
    texts: list[tuple[Word, ...]]  # every word list outside comments (values, commands, rules)
    rule_words: list[tuple[Word, ...]]  # rule lines' words (targets, prerequisites)
    compilers: set[str]  # variables whose value runs the compiler
    flag_lists: list[tuple[Word, ...]]  # every word list the compiler reads
    flag_variables: set[str]
    compiler_positions: list[int | None]  # per command: where its compiler is (compiler_at)


def view(ctx: BuildContext) -> MakeView:
    """The shared reading of ``ctx``'s file (made once per round)."""
    cached = ctx.cache.get("make_view")
    if cached is None:
        cached = ctx.cache["make_view"] = _read(ctx)
    return cached


def _read(ctx: BuildContext) -> MakeView:
    assignments, commands, texts, rule_words = _parts(ctx)
    # the make files it includes or that include it: their compiler variables and commands
    # say which of this file's variables nvcc reads (common.mk's NVCUFLAGS, used by the
    # includer's recipe); only this file's own words are edited
    outside_assignments: list[Assignment] = []
    outside_commands: list[tuple[Word, ...]] = []
    for related in ctx.related:  # workspace.includes.Included
        try:
            source = Source.checked(related.rel, related.data, ctx.settings.max_file_bytes)
            other = BuildContext(source, ctx.settings, ctx.tables, "make")
        except SourceError:
            continue
        found = _parts(other)
        outside_assignments += found[0]
        outside_commands += found[1]
    every = assignments + outside_assignments
    compilers = _compiler_variables(every)
    flag_lists: list[tuple[Word, ...]] = []
    positions = [compiler_at(command, compilers) for command in commands]
    for command, at in zip(commands, positions):
        if at is not None:
            flag_lists.append(command[at + 1 :])
    for assignment in assignments:
        if assignment.name in compilers:
            at = compiler_at(assignment.words, compilers)
            flag_lists.append(assignment.words[(at or 0) + 1:])
    flag_variables = {assignment.name for assignment in assignments
                      if _FLAG_VARIABLE.match(assignment.name)}
    pending = [word for words in flag_lists for word in words]
    # a variable named like a flag list is read for its references too (NVCC_FLAGS =
    # $(NVCC_GENCODES), where the name alone made NVCC_FLAGS a flag list)
    pending += [word for a in every if a.name in flag_variables for word in a.words]
    for command in outside_commands:
        at = compiler_at(command, compilers)
        if at is not None:
            pending += command[at + 1 :]
    pending += [word for a in outside_assignments if a.name in compilers for word in a.words[1:]]
    while pending:
        name = variable_of(unquote(pending.pop().value))
        if name and name not in flag_variables and name not in compilers:
            flag_variables.add(name)
            for assignment in every:
                if assignment.name == name:
                    pending.extend(assignment.words)
    flag_lists += [a.words for a in assignments if a.name in flag_variables]
    return MakeView(assignments, commands, texts, rule_words, compilers, flag_lists,
                    flag_variables, positions)


def _parts(ctx: BuildContext):
    """A file's own assignments, simple commands, word lists and rule lines' words."""
    data = ctx.data
    assignments: list[Assignment] = []
    commands: list[tuple[Word, ...]] = []
    texts: list[tuple[Word, ...]] = []
    rule_words: list[tuple[Word, ...]] = []
    for line in ctx.lines:
        if line.kind == "assignment":
            words = tuple(ctx.words(line.value_start, line.value_end))
            name_start = data.index(line.name.encode(), line.start)
            assignments.append(Assignment(line.name, name_start, line.value_start,
                                          line.value_end, words))
            texts.append(words)
        elif line.kind in ("recipe", "command"):
            words = ctx.words(line.value_start, line.value_end)
            texts.append(tuple(words))
            for command in _simple_commands(words):
                shell = _shell_assignment(data, command, ctx)
                if shell is not None:
                    assignments.append(shell)
                    texts.append(shell.words)
                else:
                    commands.append(command)
        elif line.kind == "directive":
            texts.append(tuple(ctx.words(line.value_start, line.value_end)))
        elif line.kind == "other":  # define bodies (recipe templates) among them
            words = ctx.words(line.start, line.end)
            texts.append(tuple(words))
            commands += _simple_commands(words)
            assignments += _eval_assignments(ctx, line.start, line.end)
        elif line.kind == "rule":
            words = tuple(ctx.words(line.value_start, line.value_end))
            rule_words.append(words)
            texts.append(words)
    return assignments, commands, texts, rule_words


def _eval_assignments(ctx: BuildContext, start: int, end: int) -> list[Assignment]:
    """The assignments a line makes through ``$(eval NAME += value)`` (CUDA samples'
    ``$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode ...))``), values up to the
    closing parenthesis."""
    found = []
    data = ctx.data
    for match in _EVAL.finditer(data, start, end):
        depth, at = 1, match.end()
        while at < end and depth:
            if data[at : at + 2] in (b"$(", b"${"):
                depth += 1
                at += 2
                continue
            if data[at] in b")}":
                depth -= 1
            at += 1
        if depth == 0:
            value_end = at - 1
            found.append(Assignment(match.group(1).decode(), match.start(1), match.end(),
                                    value_end, tuple(ctx.words(match.end(), value_end))))
    return found


def _simple_commands(words: list[Word]) -> list[tuple[Word, ...]]:
    """``words`` split at the shell's command separators (a word of its own, or a ';' ending
    a word)."""
    found: list[tuple[Word, ...]] = []
    current: list[Word] = []
    for word in words:
        if word.text in _SEPARATORS:
            found.append(tuple(current))
            current = []
        elif word.text.endswith(b";") and not word.text.endswith(b"\\;"):
            current.append(Word(word.text[:-1], word.start, word.end - 1))
            found.append(tuple(current))
            current = []
        else:
            current.append(word)
    found.append(tuple(current))
    return [command for command in found if command]


def _shell_assignment(data: bytes, command: tuple[Word, ...], ctx: BuildContext):
    """A script's ``NAME=value`` (or ``export NAME=value``) as an Assignment, else None."""
    if ctx.language != "shell":
        return None
    first = command[0]
    if first.text == b"export" and len(command) > 1:
        first = command[1]
    found = _SHELL_ASSIGNMENT.match(first.text)
    if found is None or (len(command) > 1 and command[0].text != b"export"):
        return None  # NAME=x cmd ...: an environment for one command
    value_start = first.start + found.end()
    value_end = first.end
    if value_end - value_start >= 2 and data[value_start] in b"\"'" and (
            data[value_end - 1] == data[value_start]):
        value_start, value_end = value_start + 1, value_end - 1
        words = tuple(ctx.words(value_start, value_end))
    else:
        words = (Word(data[value_start:value_end], value_start, value_end),) if (
            value_end > value_start) else ()
    return Assignment(found.group(1).decode(), first.start, value_start, value_end, words)


def is_compiler_word(text: str, compilers: set[str]) -> bool:
    word = unquote(text).lstrip("@+-")
    return bool(_COMPILER.match(word)) or variable_of(word) in compilers


def compiler_at(command: tuple[Word, ...], compilers: set[str]) -> int | None:
    """Where the compiler is in a simple command (after NAME=value environment words,
    keywords such as ``do``, ``then``, ``time``, and launcher variables: ``$(EXEC) $(NVCC)``)."""
    for index, word in enumerate(command):
        if is_compiler_word(word.value, compilers):
            return index
        bare = word.text.lstrip(b"@+-")
        if word.text not in _PREFIXES and not _SHELL_ASSIGNMENT.match(bare) and not (
                variable_of(bare.decode("utf-8", "replace"))):
            return None
    return None


def _compiler_variables(assignments: list[Assignment]) -> set[str]:
    """Variables whose value starts with the compiler (or another such variable), after
    launcher variables (``NVCC = $(PREP) nvcc``, as NVIDIA's CUDA-aware MPI example)."""
    compilers: set[str] = set()
    changed = True
    while changed:
        changed = False
        for assignment in assignments:
            if (assignment.name not in compilers and assignment.words
                    and compiler_at(assignment.words, compilers) is not None):
                compilers.add(assignment.name)
                changed = True
    return compilers


def references(text: bytes):
    """The variable references in a word: (name, start, end) relative to the word."""
    for found in _REFERENCE.finditer(text):
        group = next(index for index in (1, 2, 3) if found.group(index))
        yield found.group(group).decode(), found.start(group), found.end(group)


def removal(data: bytes, start: int, end: int) -> Edit:
    """An edit removing ``data[start:end]`` (whole words) with the blanks before it, or after
    it when none are there or they start the line (words keep one blank between them, and a
    value gets no trailing blank)."""
    before = start
    while before > 0 and data[before - 1] in b" \t":
        before -= 1
    if before < start and before > 0 and data[before - 1] != 0x0A:
        return Edit(before, end)
    after = end
    while after < len(data) and data[after] in b" \t":
        after += 1
    return Edit(start, after)


def translations(ctx: BuildContext) -> list[tuple[tuple[Word, ...], Translation]]:
    """nvcc_flags.translate over each word list the compiler reads: (the list, a
    translation) pairs, each word list translated once per round."""
    cached = ctx.cache.get("make_translations")
    if cached is None:
        archs = ctx.settings.offload_archs
        cached = ctx.cache["make_translations"] = [
            (words, found) for words in view(ctx).flag_lists
            for found in translate([word.value for word in words], archs)]
    return cached


def span(words: tuple[Word, ...], found: Translation) -> tuple[int, int]:
    """The byte span of a translation's words."""
    return words[found.first].start, words[found.last - 1].end


def replacement_edit(ctx: BuildContext, words: tuple[Word, ...], found: Translation) -> Edit:
    """The edit writing a translation's replacement (a removal when it has no words)."""
    start, end = span(words, found)
    if not found.words:
        return removal(ctx.data, start, end)
    return Edit(start, end, found.replacement.encode())


def marked_fix(ctx: BuildContext, code: str, words: tuple[Word, ...],
               found: Translation) -> Fix | None:
    """A marked translation's fix: the ``# rocmigrate CODE:`` marker and, when the option
    is removed, its removal (also where the marker is there already, or markers are off)."""
    marker = marker_fix(ctx, span(words, found)[0], Marker(code, found.reason))
    edits = marker.edits if marker is not None else ()
    if found.words is not None:
        edits += (replacement_edit(ctx, words, found),)
    if not edits:
        return None
    return Fix(f"mark {found.option}", edits, marker=marker is not None)
