"""nvcc's command-line options and what hipcc takes instead (the table is nvcc_flags.tsv).

``translate`` reads the words of an nvcc command line or flag variable (Makefiles, shell
scripts, CMake's CMAKE_CUDA_FLAGS / CUDA_NVCC_FLAGS) and says, for each nvcc option that hipcc
does not take as written, which words it spans and what to write instead. Words that are no
nvcc option (sources, -Wall given to the host compiler...) are left to the caller.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

_TABLE = Path(__file__).with_name("nvcc_flags.tsv")
# single-letter options nvcc (like clang) takes joined to their value: -O3, -Ipath, -lcublas
_JOINED = ("-O", "-I", "-D", "-U", "-L", "-l", "-o", "-x", "-m")
_VARIABLE = re.compile(r"^\$(?:\(([A-Za-z_][A-Za-z0-9_]*)\)|\{([A-Za-z_][A-Za-z0-9_]*)\}"
                       r"|([A-Za-z_][A-Za-z0-9_]*))$")


@dataclass(frozen=True)
class Option:
    """One row of nvcc_flags.tsv."""

    long: str
    short: str
    takes_value: bool
    action: str  # same, map, drop, host, linker, arch, mark, keep
    hip: str  # map: the replacement; mark: the replacement written with the marker, if any
    reason: str

    def value_map(self) -> dict[str, str] | None:
        """The value=>replacement pairs of a map row written so, else None."""
        if "=>" not in self.hip:
            return None
        return dict(pair.split("=>", 1) for pair in self.hip.split(";"))


@dataclass(frozen=True)
class Translation:
    """What to write for ``words[first:last]`` (one nvcc option and its value)."""

    first: int
    last: int
    # the words written instead (empty: the option is removed); None: left as written
    words: tuple[str, ...] | None
    option: str  # the option as written (its name, without the value)
    action: str  # the table's action
    reason: str  # why: the finding's message
    variable: str = ""  # arch: the variable holding the architecture (-arch=$(ARCH))

    @property
    def replacement(self) -> str | None:
        """The replacement as one text (words joined by a space)."""
        return None if self.words is None else " ".join(self.words)

    @property
    def needs_marker(self) -> bool:
        """A person must act: the option was removed or left with no counterpart."""
        return self.action in ("mark", "keep")


@functools.lru_cache(maxsize=1)
def options() -> dict[str, Option]:
    """Every nvcc option by each of its names."""
    table: dict[str, Option] = {}
    lines = [line for line in _TABLE.read_text().splitlines()
             if line and not line.startswith("#")]
    for line in lines[1:]:
        names, value, action, hip, reason = (line.split("\t") + [""] * 5)[:5]
        long, _, short = names.partition("|")
        option = Option(long, short or long, value == "value", action, hip, reason)
        for name in (long, short):
            if name:
                table[name] = option
    return table


_QUOTE_STARTS = "\\\"'"  # the first character of each quote unquote removes


def unquote(text: str) -> str:
    """A word's text without its outer quotes ("a b", 'a b', \\"a b\\" as make passes it)."""
    if not text or text[0] not in _QUOTE_STARTS:  # most words (called for every word read)
        return text
    for quote in ('\\"', '"', "'"):
        if len(text) >= 2 * len(quote) and text.startswith(quote) and text.endswith(quote):
            return text[len(quote) : -len(quote)]
    return text


def variable_of(text: str) -> str:
    """The variable a word consists of ($(X), ${X}, $X), else ''."""
    found = _VARIABLE.match(text)
    return next((name for name in found.groups() if name), "") if found else ""


def offload_arch_words(archs: Sequence[str]) -> tuple[str, ...]:
    """hipcc's architecture flags for ``archs``: one --offload-arch per target (Debian's
    hipcc 5.2 and clang 15 take the flag repeated, as they take a comma list)."""
    return tuple(f"--offload-arch={arch}" for arch in archs)


def _lookup(word: str) -> tuple[Option, str, str | None] | None:
    """The option a word starts, the name written and its joined value (None: no value in
    the word)."""
    table = options()
    name, equals, value = word.partition("=")
    option = table.get(name)
    if option is not None:
        if equals and not option.takes_value:
            return None  # -Werror=x: clang's own form, no nvcc option
        return option, name, value if equals else None
    prefix = word[:2]
    if prefix in _JOINED and len(word) > 2 and prefix in table:
        return table[prefix], prefix, word[2:]
    return None


def translate(words: Sequence[str], offload_archs: Sequence[str]) -> list[Translation]:
    """The nvcc options among ``words`` (texts of one command line or flag list, in order)
    that hipcc does not take as written, with what to write instead. All architecture
    options together become ``offload_archs`` (written where the first one was)."""
    found: list[Translation] = []
    arch_written = False
    index = 0
    while index < len(words):
        word = unquote(words[index])
        if word.startswith("--offload-arch"):  # AMD targets given already (or converted)
            arch_written = True
        looked = _lookup(word) if word.startswith("-") else None
        if looked is None:
            index += 1
            continue
        option, name, value = looked
        last = index + 1
        if option.takes_value and value is None:
            if last >= len(words):
                found.append(Translation(index, last, None, name, "keep",
                                         f"{name} without its value"))
                index = last
                continue
            value = words[last]
            last += 1
        written = " ".join(words[index:last])
        translation = _translate_one(option, name, value, index, last, offload_archs,
                                     arch_written)
        if translation.action == "arch" and translation.words:
            arch_written = True
        if translation.action == "map" and len(translation.words) == 1 and (
                translation.words[0] in words) and translation.words[0] != written:
            # -g -G: the flag is given already
            translation = Translation(index, last, (), name, "drop",
                                      f"{translation.reason} (given already)")
        if translation.action != "same" and (translation.words is None
                                             or translation.replacement != written):
            found.append(translation)
        index = last
    return found


def _translate_one(option: Option, name: str, value: str | None, first: int, last: int,
                   offload_archs: Sequence[str], arch_written: bool) -> Translation:
    action = option.action
    if action == "same":
        if name == option.short:  # as written
            return Translation(first, last, None, name, "same", "")
        words = (option.short,) if value is None else (option.short, value)
        return Translation(first, last, words, name, "map", f"{name} -> {option.short}")
    if action == "drop":
        return Translation(first, last, (), name, action, f"{name} removed: {option.reason}")
    if action in ("mark", "keep"):
        # mark: the table's replacement (-fatbin -> --genco) or nothing; keep: as written
        words = tuple(option.hip.split()) if action == "mark" else None
        return Translation(first, last, words, name, action,
                           f"{name}{' ' + value if value else ''}: {option.reason}")
    if action == "arch":
        variable = variable_of(unquote(value or ""))
        if variable and not arch_written:
            return Translation(first, last, (f"--offload-arch={unquote(value)}",), name, action,
                               f"{name}: the CUDA architecture in {variable} becomes an AMD "
                               f"one", variable)
        words = () if arch_written else offload_arch_words(offload_archs)
        return Translation(first, last, words, name, action,
                           f"{name} {value}: CUDA architecture; AMD targets "
                           f"{','.join(offload_archs)}")
    plain = unquote(value) if value is not None else None
    if action == "host":
        host = plain.split() if "$" in plain else [
            flag for part in plain.split() for flag in part.split(",") if flag]
        host = [word for flag in host for word in _host_flag(flag)]
        return Translation(first, last, tuple(host), name, action,
                           f"{name} {value}: hipcc takes host compiler flags directly"
                           + ("; code instrumentation stays on the host side (-Xarch_host)"
                              if "-Xarch_host" in host else ""))
    if action == "linker":
        return Translation(first, last, ("-Wl," + ",".join(plain.split()),), name, action,
                           f"{name} {value}: hipcc passes linker flags with -Wl,")
    pairs = option.value_map()
    if pairs is not None:
        mapped = pairs.get(plain)
        if mapped is None:
            return Translation(first, last, None, name, "keep",
                               f"{name} {value}: no hipcc counterpart of this value")
        return Translation(first, last, tuple(mapped.split()), name, action,
                           _mapped_reason(f"{name} {value}", mapped, option))
    words = tuple(part.replace("{value}", value or "") for part in option.hip.split())
    return Translation(first, last, words, name, action,
                       _mapped_reason(name, " ".join(words), option))


# host compiler flags that would instrument the device code too where hipcc compiles both sides
# (-finstrument-functions: calls of __cyg_profile_func_enter, which the GPU has not; the link of
# the device code fails), kept on the host side with clang's -Xarch_host
_HOST_SIDE_ONLY = re.compile(r"^(?:-finstrument-functions(?:-after-inlining)?|-pg|-p|"
                             r"-fprofile-arcs|-ftest-coverage|--coverage|-fsanitize=.*|"
                             r"-fprofile-generate(?:=.*)?|-fprofile-instr-generate(?:=.*)?)$")
# gcc's spelling that clang reads otherwise: -export-dynamic is `-e xport-dynamic` (an entry
# point) to clang's driver; -rdynamic asks both for the linker's --export-dynamic
_HOST_SPELLINGS = {"-export-dynamic": "-rdynamic"}


def _host_flag(flag: str) -> tuple[str, ...]:
    """A host compiler flag as hipcc, which compiles host and device code, takes it."""
    if _HOST_SIDE_ONLY.match(flag):
        return ("-Xarch_host", flag)
    return (_HOST_SPELLINGS.get(flag, flag),)


def _mapped_reason(written: str, replacement: str, option: Option) -> str:
    return f"{written} -> {replacement}" + (f": {option.reason}" if option.reason else "")
