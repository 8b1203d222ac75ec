"""The base class of every rule, and the per-file context rules read from."""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import ClassVar, Iterable

from .apitables import ApiTables
from .diagnostics import Diagnostic, Renames
from .parsing import treesitter
from .parsing.tokens import DirectiveSpans, LiteralSpans, blank_literals, top_level_items
from .settings import Settings
from .source import Source

_CODE = re.compile(r"^[A-Z]{3}[0-9]{3}$")
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LANGUAGES = ("cuda", "cmake", "make", "shell")
DOC_SECTIONS = ("What it does", "Why is this bad on AMD", "Example", "Use instead", "Fix safety")


class RuleContext:
    """One file as rules see it in one round of the fix loop. Built lazily: a rule that needs no
    tree does not pay for one."""

    def __init__(self, source: Source, settings: Settings, tables: ApiTables, tree=None,
                 included: tuple = (), origin: Source | None = None, rounds: tuple = ()) -> None:
        self.source = source
        self.data = source.data
        self.path = source.path
        self.settings = settings
        self.tables = tables
        # the project files this one includes (workspace.includes.Included: rel, data and the
        # path of this file's own #include that leads there), when the runner converts a tree;
        # empty for a single file and for lint
        self.included = included
        self._tree = tree
        # the fix loop's input, and the fixes of the rounds before this one (engine: each
        # round's (edits, bulk renames or None, inserted include/define lines or None))
        self.origin = origin or source
        self._rounds = rounds
        self.cache: dict = {}  # per-file derived data rules may share (e.g. brace blocks)

    @property
    def tree(self):
        if self._tree is None:
            self._tree = treesitter.parse(self.data)
        return self._tree

    @property
    def parsed_tree(self):
        """The tree if some rule asked for it, else None (nothing was parsed)."""
        return self._tree

    @functools.cached_property
    def literals(self) -> LiteralSpans:
        return LiteralSpans(self.data)

    @functools.cached_property
    def code(self) -> bytes:
        """The file with comments, literals and include directives blanked to spaces (same
        offsets): what bracket and statement scans read."""
        return blank_literals(self.data, self.literals)

    @functools.cached_property
    def directives(self) -> DirectiveSpans:
        return DirectiveSpans(self.data)

    @functools.cached_property
    def top_level_items(self) -> list[tuple[int, int]] | None:
        """The file's top-level items that hold braces (tokens.top_level_items), or None."""
        return top_level_items(self.code, self.directives)

    def parses_clean_at(self, offset: int) -> bool:
        """Does the parse have no error around ``offset``, told without parsing the file where
        no rule has parsed it yet: ``offset`` lies in a top-level item that parses alone without
        an error (a complete item parses the same between complete items)? False where that
        cannot be told so; read the tree then."""
        if self._tree is not None:
            return not self._tree.root_node.has_error
        index = self.item_holding(offset, offset)
        if index is None:
            return False
        clean = self.cache.setdefault("items.clean", {})
        if index not in clean:
            start, end = self.top_level_items[index]
            clean[index] = not treesitter.parse(self.data[start:end]).root_node.has_error
        return clean[index]

    def item_holding(self, start: int, end: int) -> int | None:
        """The index in ``top_level_items`` of the item that holds [start, end) (``start``
        before its end: an insertion right after its closing brace is not in it), or None."""
        items = self.top_level_items
        if not items:
            return None
        index = bisect.bisect_right(items, (start, len(self.data) + 1)) - 1
        if index < 0 or start >= items[index][1] or end > items[index][1]:
            return None
        return index

    def in_directive(self, offset: int) -> bool:
        """Is ``offset`` inside a preprocessor directive (as tokens.in_directive, indexed)?"""
        return self.directives.contains(offset)

    def in_code(self, offset: int) -> bool:
        return self.literals.covering(offset) is None

    def text(self, node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def origin_offset(self, offset: int) -> int | None:
        """Where ``offset`` of this round's text was in the fix loop's input (``origin``), for
        readers of the input (libclang); None inside text a fix wrote."""
        for edits, renames, extra in reversed(self._rounds):
            steps = [edits if renames is None else sorted(edits + renames.edits())]
            for step in ([[extra]] if extra is not None else []) + steps:
                offset = _offset_before(step, offset)
                if offset is None:
                    return None
        return offset


def _offset_before(edits, offset: int) -> int | None:
    """The offset in the text before ``edits`` (sorted, apart) of ``offset`` after them."""
    shift = 0
    for edit in edits:
        start = edit.start + shift
        if offset < start:
            break
        written = start + len(edit.text)
        if offset == start:
            return edit.start
        if offset < written:
            return None
        shift += len(edit.text) - (edit.end - edit.start)
    return offset - shift


@dataclass(frozen=True)
class CodeTable:
    """What a fix loop reads of its rules' codes: each code's kind (Rule.kind_of), the codes
    whose fixes chain, and what each of those feeds (the codes of Rule.chains_into; None: any
    rule). The same for every file of a run: ``convert`` makes it once per rule set."""

    kinds: dict[str, str]
    chaining: frozenset[str]
    chained: dict[str, frozenset[str] | None]


def code_table(rules) -> CodeTable:
    """The CodeTable of ``rules`` (instances)."""
    return CodeTable(
        {code: rule.kind_of(code) for rule in rules for code in rule.codes()},
        frozenset(code for rule in rules if rule.chains for code in rule.codes()),
        {code: (frozenset(rule.chains_into) or None) for rule in rules if rule.chains
         for code in rule.codes()})


class Rule:
    """A rule: a stable code, a kebab-case name, docs in fixed sections, and ``check()``.

    Subclasses set the class attributes and implement ``check``; the docstring is the rule's
    documentation (sections: What it does / Why is this bad on AMD / Example / Use instead /
    Fix safety).
    """

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    family: ClassVar[str] = ""
    fix: ClassVar[str] = "never"  # always / sometimes / never
    extra_codes: ClassVar[tuple[str, ...]] = ()  # further codes this rule emits (sub-diagnostics)
    # True when this rule's fixes can create findings for any rule: the engine then runs the
    # rules again after applying them instead of stopping once nothing was deferred.
    chains: ClassVar[bool] = False
    # With ``chains``: the codes of the rules its fixes can make work for (the next round runs
    # those and the rules that acted); empty: any rule may find work, and every rule runs.
    chains_into: ClassVar[tuple[str, ...]] = ()
    # True for the AMD optimisation rules (streams, transfers, shared memory, atomics...):
    # ``convert --no-optimize`` leaves them out and gives a pure port.
    optimization: ClassVar[bool] = False
    # "conversion" for the rules whose fixes are the port itself (renames, includes, lowerings):
    # the summary counts their fixed findings per library; "check" for the rest.
    category: ClassVar[str] = "check"
    # the codes among codes() that report what a person must port (HIP lacks it): always listed
    # under "needs attention"
    attention_codes: ClassVar[tuple[str, ...]] = ()
    # what the rule reads: C/C++/CUDA sources (a RuleContext), or build files (a
    # migrator.buildfiles BuildContext) of one of LANGUAGES' build languages
    languages: ClassVar[tuple[str, ...]] = ("cuda",)

    def check(self, ctx: RuleContext) -> Iterable[Diagnostic]:  # pragma: no cover - interface
        raise NotImplementedError

    def check_renames(self, ctx: RuleContext) -> tuple[Iterable[Diagnostic], Renames | None]:
        """``check``'s diagnostics, less the plain renames a rule reports apart in bulk (None
        when it reports none so): what the engine runs."""
        return self.check(ctx), None

    def rename_text(self, ctx: RuleContext, start: int, end: int, text: bytes) -> bytes | None:
        """For a rule that renames identifiers (one edit each, keeping the syntax, under its
        ``code``): ``text``, which a fix writes over [start, end) of ``ctx``'s text, with the
        renames this rule would make in it in the next round; None when it cannot tell there
        (a name it would do more than rename, or whose context only the whole file shows). The
        engine then applies the fix in this round, carrying the renames it covers, instead of
        waiting a round for them; it relies on rules judging CUDA code and its renamed form
        alike (semantic.spellings), so that the fix made on the renamed text would be this.
        The default (None) is for every other rule."""
        return None

    @classmethod
    def codes(cls) -> tuple[str, ...]:
        return (cls.code, *cls.extra_codes)

    @classmethod
    def kind_of(cls, code: str) -> str:
        """Where the summary lists a finding of ``code`` that is not a marker (a marker always
        needs attention): conversion, optimization, attention or check."""
        if code in cls.attention_codes:
            return "attention"
        return "optimization" if cls.optimization else cls.category

    @classmethod
    def documentation(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def validate(cls) -> list[str]:
        """Problems with this rule's identity or docs (empty when it is well-formed)."""
        problems = []
        for code in cls.codes():
            if not _CODE.match(code):
                problems.append(f"{cls.__name__}: bad code {code!r}")
        if not _NAME.match(cls.name):
            problems.append(f"{cls.__name__}: name {cls.name!r} is not kebab-case")
        if cls.fix not in ("always", "sometimes", "never"):
            problems.append(f"{cls.__name__}: fix must be always/sometimes/never")
        if cls.category not in ("conversion", "check"):
            problems.append(f"{cls.__name__}: category must be conversion/check")
        if not cls.languages or not set(cls.languages) <= set(LANGUAGES):
            problems.append(f"{cls.__name__}: languages must be among {', '.join(LANGUAGES)}")
        if not set(cls.attention_codes) <= set(cls.codes()):
            problems.append(f"{cls.__name__}: attention_codes must be among its codes")
        doc = cls.documentation()
        for section in DOC_SECTIONS:
            if f"## {section}" not in doc:
                problems.append(f"{cls.__name__}: docs lack the section '## {section}'")
        if not cls.summary:
            problems.append(f"{cls.__name__}: no summary")
        return problems


# the line numbers a marker's text leaves out ("(line 12)", "(at line 12)", " at line 12"): they
# move as the file changes, and a second pass must find the marker again
LINE_NUMBER = re.compile(r"(?=[\s(])(?:\s*\((?:at )?line \d+\)|\s+at line \d+)")


@dataclass(frozen=True)
class Marker:
    """An inline marker comment written into the output at a site that needs a person."""

    code: str
    text: str
    # the start of ``text`` that names the site's problem where the text quotes code that other
    # fixes of the same conversion may rewrite: a marker of this code starting with it is this
    # marker (a second pass over the output then finds it); a NUL in it stands for one name
    # such a fix may rewrite (hipMemcpy made hipMemcpyAsync); "" compares the whole text
    key: str = ""

    def render(self) -> bytes:
        return f"// rocmigrate {self.code}: {self.text}".encode()

    def is_rendered_as(self, line: bytes) -> bool:
        """Is ``line`` (a marker line, stripped) this marker, by its key?"""
        head = f"// rocmigrate {self.code}: ".encode()
        if not self.key or not line.startswith(head):
            return False
        pattern = rb"\w+".join(re.escape(part.encode()) for part in self.key.split("\0"))
        return re.match(pattern, line[len(head):]) is not None
