"""What the CMake rules (rules/build/cmake_*.py) share: the library a link item names,
keyword-value reading of property commands, and edits that add or remove whole arguments and
lines."""

from __future__ import annotations

import re

from migrator.apitables import Library, library_named
from migrator.buildfiles.cmake import Argument, Command
from migrator.buildfiles.context import line_indent
from migrator.diagnostics import Edit

# commands that set target or source properties as KEY VALUE pairs after PROPERTIES
PROPERTY_COMMANDS = frozenset({"set_target_properties", "set_source_files_properties",
                               "set_directory_properties", "set_tests_properties"})
HIP_LANGUAGE_MINIMUM = (3, 21)  # CMake's first release with the HIP language
_LINK_FLAG = re.compile(r"^-l(.+)$")


def link_item_library(text: str, roc: bool) -> Library | None:
    """The CUDA library a link item names: ``CUDA::cublas``, ``-lcublas`` or ``cublas``."""
    if text.startswith("CUDA::"):
        return library_named(text[len("CUDA::"):], roc)
    flag = _LINK_FLAG.match(text)
    return library_named(flag.group(1) if flag else text, roc)


def commands(script, *names: str):
    """The commands of ``script`` named one of ``names`` (lower case)."""
    return [command for command in script.commands if command.lower in names]


def property_pairs(command: Command) -> list[tuple[Argument, list[Argument]]]:
    """The (key, values) pairs a property command sets: set_target_properties(... PROPERTIES
    K V K V) gives one value each; set_property(... PROPERTY K V...) gives all the rest."""
    args = command.args
    if command.lower in PROPERTY_COMMANDS:
        at = next((i for i, arg in enumerate(args) if arg.value == "PROPERTIES"), None)
        if at is None:
            return []
        rest = args[at + 1 :]
        return [(rest[i], list(rest[i + 1 : i + 2])) for i in range(0, len(rest) - 1, 2)]
    if command.lower == "set_property":
        at = next((i for i, arg in enumerate(args) if arg.value == "PROPERTY"), None)
        if at is None or at + 1 >= len(args):
            return []
        return [(args[at + 1], list(args[at + 2 :]))]
    return []


def set_values(command: Command) -> list[Argument]:
    """The value arguments of set(NAME values... [CACHE TYPE DOC [FORCE]] [PARENT_SCOPE])."""
    values = []
    for arg in command.args[1:]:
        if arg.kind == "unquoted" and arg.text in (b"CACHE", b"PARENT_SCOPE"):
            break
        values.append(arg)
    return values


def newline_of(data: bytes) -> bytes:
    return b"\r\n" if b"\r\n" in data else b"\n"


def lines_after(data: bytes, command: Command, lines: list[bytes]) -> Edit:
    """An edit writing ``lines`` as commands on their own lines after ``command``, at its
    indent."""
    indent = line_indent(data, command.start)
    newline = newline_of(data)
    return Edit(command.end, command.end, b"".join(newline + indent + line for line in lines))


def lines_before(data: bytes, command: Command, lines: list[bytes]) -> Edit:
    """An edit writing ``lines`` as commands on their own lines before ``command`` (at the
    start of its line, at its indent)."""
    indent = line_indent(data, command.start)
    newline = newline_of(data)
    at = data.rfind(b"\n", 0, command.start) + 1
    return Edit(at, at, b"".join(indent + line + newline for line in lines))


def remove_arguments(data: bytes, args: list[Argument]) -> list[Edit]:
    """Edits deleting ``args``: each run of them (only space between) goes with the space
    before it, or with its whole lines when nothing else is on them."""
    runs: list[list[int]] = []
    for arg in sorted(args, key=lambda a: a.start):
        if runs and not data[runs[-1][1] : arg.start].strip():
            runs[-1][1] = arg.end
        else:
            runs.append([arg.start, arg.end])
    edits = []
    for start, end in runs:
        line_start = data.rfind(b"\n", 0, start) + 1
        after = end
        while after < len(data) and data[after] in b" \t\r":
            after += 1
        if not data[line_start:start].strip() and data[after : after + 1] == b"\n":
            edits.append(Edit(line_start, after + 1))  # alone on its lines
            continue
        before = start
        while before > 0 and data[before - 1] in b" \t":
            before -= 1
        if data[before - 1 : before] in (b"(", b"\n"):  # first on its line: the space after
            edits.append(Edit(start, after))
        else:
            edits.append(Edit(before, end))
    return edits


def quoted_list(items: tuple[str, ...] | list[str]) -> bytes:
    """One CMake argument holding ``items`` as a list: ``a`` alone, else ``"a;b"``."""
    joined = ";".join(items)
    return (joined if len(items) == 1 else f'"{joined}"').encode()


def version_tuple(text: str) -> tuple[int, ...] | None:
    parts = text.split(".")
    if not all(part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def remove_command(data: bytes, command: Command) -> Edit:
    """An edit deleting ``command``: its whole line when nothing else is on it."""
    start = data.rfind(b"\n", 0, command.start) + 1
    end = command.end
    while end < len(data) and data[end] in b" \t\r":
        end += 1
    if data[start : command.start].strip() == b"" and data[end : end + 1] in (b"\n", b""):
        return Edit(start, min(end + 1, len(data)))
    return Edit(command.start, command.end)
