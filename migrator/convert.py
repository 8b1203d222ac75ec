"""Converting one file: read, check, run the engine with the conversion rules."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from . import apitables, registry
from .diagnostics import Finding
from .engine import EngineError, fix_source
from .parsing import treesitter
from .settings import Settings
from .source import Source, SourceError

CONVERTIBLE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                        ".inl", ".hip")


@dataclass
class FileResult:
    """What happened to one file. Workers return these; they never raise."""

    rel: str
    status: str  # converted / unchanged / copied / cached / skipped / failed
    message: str = ""
    findings: list[Finding] = field(default_factory=list)
    output: bytes | None = None
    input_hash: str = ""


@functools.lru_cache(maxsize=4)
def _rules(settings: Settings):
    classes = registry.all_rules(settings.rules_dir)
    return registry.select(classes, settings.select, settings.ignore)


def convert_bytes(rel: str, data: bytes, settings: Settings) -> FileResult:
    """Convert one file's bytes; every problem becomes a failed result with a clear message."""
    try:
        source = Source.checked(rel, data, settings.max_file_bytes)
        tree = treesitter.parse(source.data)
        _reject_non_code(source, tree)
        tables = apitables.load(settings.rules_dir / "api" if settings.rules_dir else None)
        rules = [cls() for cls in _rules(settings)]
        result = fix_source(source, rules, settings, tables, tree=tree)
    except (SourceError, EngineError) as err:
        return FileResult(rel, "failed", str(err))
    except RecursionError:
        return FileResult(rel, "failed", "file is nested too deeply to process")
    except Exception as err:  # a rule bug must not end the run; report it against the file
        return FileResult(rel, "failed", f"internal error: {type(err).__name__}: {err}")
    status = "converted" if result.output != data else "unchanged"
    return FileResult(rel, status, findings=result.findings, output=result.output)


def _reject_non_code(source: Source, tree) -> None:
    """A file most of which does not parse as C/C++/CUDA is not source code: refuse it."""
    root = tree.root_node
    if not root.has_error or len(source.data) < 64:
        return
    error_bytes = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error:
            error_bytes += node.end_byte - node.start_byte
        elif node.has_error:
            stack.extend(node.children)
    if error_bytes * 2 > len(source.data):
        line, _ = source.position(_first_error(root))
        raise SourceError(f"does not parse as C/C++/CUDA ({error_bytes} of {len(source.data)} "
                          f"bytes unparsable, first error at line {line})")


def _first_error(root) -> int:
    node = root
    while True:
        nxt = next((c for c in node.children if c.has_error or c.is_error), None)
        if nxt is None or node.is_error:
            return node.start_byte
        node = nxt
