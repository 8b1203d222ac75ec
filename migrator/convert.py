"""Converting one file: read, check, run the engine with the conversion rules."""

from __future__ import annotations

import contextlib
import functools
import gc
import re

from . import apitables, buildfiles, registry, support
from .engine import EngineError, fix_source
from .parsing.tokens import LiteralSpans, in_directive
from .results import FileResult
from .rule import CodeTable, code_table
from .settings import Settings
from .source import Source, SourceError


@functools.lru_cache(maxsize=16)
def rules_for(settings: Settings, language: str = "cuda"):
    """The rule classes these settings select for files of ``language`` (optimisation rules
    only with ``optimize``)."""
    classes = registry.all_rules(settings.rules_dir)
    chosen = registry.select(classes, settings.select, settings.ignore)
    return [cls for cls in chosen
            if language in cls.languages and (settings.optimize or not cls.optimization)]


@functools.lru_cache(maxsize=16)
def codes_for(settings: Settings, language: str = "cuda") -> CodeTable:
    """The code_table of ``rules_for``'s rules: the same for every file of a run."""
    return code_table([cls() for cls in rules_for(settings, language)])


def convert_bytes(rel: str, data: bytes, settings: Settings, included: tuple = ()) -> FileResult:
    """Convert one file's bytes; every problem becomes a failed result with a clear message.
    ``included``: the project files it includes (workspace.includes), for rules that look there."""
    return process_bytes(rel, data, settings, apply_fixes=True, reject_non_code=True,
                         included=included)


def process_bytes(rel: str, data: bytes, settings: Settings, apply_fixes: bool,
                  reject_non_code: bool, included: tuple = ()) -> FileResult:
    """Run the selected rules over one file's bytes (fixing them with ``apply_fixes``); never
    raises: every problem becomes a failed result with a clear message. ``convert`` and
    ``lint`` both come through here; the configuration's per-file ignores apply here."""
    with _collecting_rarely():
        return _process(rel, data, settings.for_file(rel), apply_fixes, reject_non_code,
                        included)


def _process(rel: str, data: bytes, settings: Settings, apply_fixes: bool,
             reject_non_code: bool, included: tuple) -> FileResult:
    try:
        source = Source.checked(rel, data, settings.max_file_bytes)
        language = buildfiles.language_of(rel)
        if language is None:
            _reject_script(source)
        if reject_non_code and language is None:
            _reject_non_code(source)
        # a team's rules directory adds rules, not API names; --roc and --dnn choose libraries
        tables = apitables.load(variants=settings.table_variants)
        rules = [cls() for cls in rules_for(settings, language or "cuda")]
        codes = codes_for(settings, language or "cuda")
        if language is not None:
            result = buildfiles.fix_build_file(source, rules, settings, tables, language,
                                               apply_fixes, included, codes)
        else:
            result = fix_source(source, rules, settings, tables, apply_fixes=apply_fixes,
                                included=included, codes=codes)
    except (SourceError, EngineError) as err:
        return FileResult(rel, "failed", str(err))
    except RecursionError:
        return FileResult(rel, "failed", "file is nested too deeply to process")
    except Exception as err:  # a rule bug must not end the run; report it against the file
        return FileResult(rel, "failed", f"internal error: {type(err).__name__}: {err}")
    status = "converted" if result.output != data else "unchanged"
    return FileResult(rel, status, source.encoding_note(), findings=result.findings,
                      output=result.output, support=support.referenced(result.output))


# A file's conversion makes millions of short-lived objects and few cycles: at the default
# threshold (700 allocations) the cyclic collector runs thousands of times per file, each time
# re-examining the young objects still alive (about 12% of a dense tree's conversion, 40% of a
# 1 MB line of warp shuffles). Reference counting frees almost everything anyway.
_FIRST_GENERATION = 20_000


@contextlib.contextmanager
def _collecting_rarely():
    """The cyclic collector runs rarely while a file is processed; as before afterwards."""
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], _FIRST_GENERATION), *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


# Bytes that cannot appear in C/C++/CUDA code outside comments and literals.
_NOT_SOURCE = re.compile(rb"[@`\x00-\x08\x0e-\x1f\x7f]")
# all the others: deleting them (bytes.translate) tells whether a file has any of those, in a
# tenth of the time a search takes
_SOURCE_BYTES = bytes(byte for byte in range(256) if not _NOT_SOURCE.match(bytes([byte])))


def _reject_script(source: Source) -> None:
    """Refuse a script whatever its name (``#!`` on line 1, after a byte-order mark if any): no
    C/C++ file starts so, and an include inserted above the ``#!`` would break the script."""
    data = source.data
    if data.startswith(b"#!", 3 if data.startswith(b"\xef\xbb\xbf") else 0):
        raise SourceError("does not parse as C/C++/CUDA (a script: line 1 starts with '#!')")


def _reject_non_code(source: Source) -> None:
    """Refuse a file that is not C/C++/CUDA source: many bytes no C token can contain, outside
    comments, literals and preprocessor directives.

    Grammar errors alone do not refuse a file: tree-sitter cannot parse much real code (CUDA's
    own math_functions.h is one ERROR node under its macros), and the conversion is lexical where
    the tree cannot help. The engine's parse guard still refuses output with more parse errors
    than the input had where the fixes edited, whether or not the input parsed cleanly."""
    data = source.data
    if not data.translate(None, _SOURCE_BYTES):
        return
    stray = [m.start() for m in _NOT_SOURCE.finditer(data)]
    allowed = max(8, len(data) // 100)
    if len(stray) <= allowed:
        return  # few enough wherever they stand (a backtick in a comment): no scan needed
    literals = LiteralSpans(data)
    # macro bodies may hold anything until expanded (CUDA's own storage_class.h has "@@@")
    stray = [offset for offset in stray
             if literals.covering(offset) is None and not in_directive(data, offset)]
    if len(stray) > allowed:
        line, _ = source.position(stray[0])
        raise SourceError(f"does not parse as C/C++/CUDA ({len(stray)} characters no C/C++ "
                          f"token can contain, first at line {line})")
