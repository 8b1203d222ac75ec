"""Build files (CMake scripts, Makefiles, shell build scripts) as ``convert`` migrates them.

The rules of the ``build`` family (rules/build/) read a file through a BuildContext (the
readers in cmake.py and make.py) and yield the same diagnostics and fixes as the source
rules; ``fix_build_file`` is their fix loop. It is the source engine's loop without the parse
tree: the fixes of a round that do not overlap are applied in one forward pass, the file is
read again, and the rules run until nothing applies. As there, the loop stops once every fix
that applies was applied and none came from a rule that ``chains`` (the CMake rules whose
fixes other CMake rules read: languages, packages, FindCUDA, flags); the make rules read a
file's CUDA and HIP spellings alike, so their fixes make no work for each other.
"""

from __future__ import annotations

_MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def language_of(rel: str) -> str | None:
    """The build language of the file at ``rel`` (a posix path): ``cmake``, ``make``,
    ``shell``, or None when it is no build file."""
    name = rel.rsplit("/", 1)[-1]
    if name == "CMakeLists.txt" or name.endswith(".cmake"):
        return "cmake"
    if name in _MAKEFILE_NAMES or name.endswith((".mk", ".make")) or (
            name.startswith("Makefile.") and not name.endswith((".am", ".in"))):
        return "make"
    if name.endswith(".sh"):
        return "shell"
    return None


def fix_build_file(source, rules: list, settings, tables, language: str,
                   apply_fixes: bool = True, related: tuple = (), codes=None):
    """Run the build rules of ``language`` over one file until nothing changes (the fix loop
    loads with the first build file: discovery needs only ``language_of``). ``related``: the
    make files it includes or that include it (workspace.includes.Included), whose variables
    tell the rules what runs the compiler; ``codes``: the rules' code_table, when the caller
    made it already."""
    from .fixer import fix_build_file as fix

    return fix(source, rules, settings, tables, language, apply_fixes, related, codes)
