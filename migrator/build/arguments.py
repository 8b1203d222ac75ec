"""Configure options a user passes to the project's own build: ``--cmake-arg`` (to CMake's
configure step) and ``--make-var NAME=VALUE`` (on make's command line), checked before anything
runs. Neither may move the build out of the build folder or read another source tree: a CMake
argument is a cache entry (``-D``/``-U``) or a warning/log switch, never ``-S``/``-B``/``-C``/
``-P``/``--preset`` (and no ``-D`` of CMake's own source, binary or output folders); a make
variable is a plain name, never one of make's own (``MAKEFLAGS``, ``MAKEFILES``, ``CURDIR``...).
"""

from __future__ import annotations

import re

_CMAKE_SWITCHES = ("-W", "--log-level=", "--log-context", "--warn-uninitialized",
                   "--warn-unused-vars", "--no-warn-unused-cli", "--debug-find",
                   "--debug-output", "--trace", "--trace-expand")
_CACHE_NAME = re.compile(r"^-[DU]\s*([A-Za-z_][\w.+-]*)(?::[A-Za-z]+)?(?:=|$)")
# cache entries that move the build or its outputs, or choose what CMake reads as its tree
_CMAKE_PLACES = re.compile(r"^CMAKE_(?:SOURCE_DIR|BINARY_DIR|HOME_DIRECTORY|CACHEFILE_DIR|"
                           r"\w*_OUTPUT_DIRECTORY(?:_\w+)?|PROJECT_INCLUDE\w*|"
                           r"PROJECT_TOP_LEVEL_INCLUDES|GENERATOR\w*)$")
_MAKE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAKE_OWN = frozenset({"MAKEFLAGS", "MFLAGS", "MAKEFILES", "MAKEFILE_LIST", "MAKECMDGOALS",
                       "MAKEOVERRIDES", "MAKELEVEL", "MAKE", "CURDIR", "SHELL", "VPATH",
                       "GNUMAKEFLAGS"})


class ArgumentError(ValueError):
    """An option the build refuses (the message says which and why)."""


def checked_cmake_args(args: tuple[str, ...]) -> tuple[str, ...]:
    for arg in args:
        if arg.startswith(("-D", "-U")):
            name = _CACHE_NAME.match(arg)
            if name is None:
                raise ArgumentError(f"--cmake-arg {arg!r}: expected -DNAME=VALUE, "
                                    "-DNAME:TYPE=VALUE or -UNAME")
            if _CMAKE_PLACES.match(name.group(1)):
                raise ArgumentError(f"--cmake-arg {arg!r}: {name.group(1)} chooses where CMake "
                                    "reads or writes; the build folder and the tree are "
                                    "rocmigrate's (--build-dir)")
            continue
        if arg.startswith(_CMAKE_SWITCHES):
            continue
        raise ArgumentError(f"--cmake-arg {arg!r}: only cache entries (-DNAME=VALUE, -UNAME) and "
                            "warning or log switches (-W..., --log-level=...) are passed; the "
                            "source and build folders (-S, -B), scripts (-C, -P), presets and "
                            "generators are rocmigrate's")
    return args


def checked_make_vars(assignments: tuple[str, ...]) -> tuple[str, ...]:
    for assignment in assignments:
        name, equals, _ = assignment.partition("=")
        name = name.rstrip(":+?")
        if not equals or not _MAKE_NAME.match(name):
            raise ArgumentError(f"--make-var {assignment!r}: expected NAME=VALUE (a variable "
                                "name of letters, digits and underscores)")
        if name in _MAKE_OWN:
            raise ArgumentError(f"--make-var {assignment!r}: {name} is make's own variable (it "
                                "would change what make reads or where it runs)")
    return assignments
