"""What in a function relies on the legacy null stream: work issued to it synchronises with every
blocking stream, so a stream may only become non-blocking where nothing like this sits beside it."""

from __future__ import annotations

import bisect
import functools
import operator
import os
import re
from dataclasses import dataclass

from migrator.apitables import ApiTables
from migrator.parsing.tokens import LAUNCH_OPENING
from migrator.rule import RuleContext
from migrator.semantic.calls import WORD_BYTES, argument_text, close_of, template_ids_whole
from migrator.semantic.scopes import Block, code_matches
from migrator.semantic.spellings import hip_name

# Calls are recognised by the HIP name the API tables give them (semantic.spellings.hip_name),
# so that a CUDA file and its converted output are judged alike: CUDA runtime and driver spellings
# (cudaMemcpy, cuMemcpyHtoD, cuStreamSynchronize) and HIP's are the same call here.
# sync copies/sets always go to the null stream
_SYNC_CALL = re.compile(
    r"hip(?:Memcpy(?:2D|3D|Peer|ToSymbol|FromSymbol|ToArray|FromArray|2DToArray|"
    r"2DFromArray|AtoH|HtoA|HtoD|DtoH|DtoD)?|Memset(?:2D|3D|D8|D16|D32)?)")
# (async call, index of its stream argument): a missing or null stream is the null stream
_STREAM_ARGUMENT = {
    "MemcpyAsync": 4, "MemsetAsync": 3, "Memcpy2DAsync": 7, "Memset2DAsync": 5,
    "MemcpyToSymbolAsync": 5, "MemcpyFromSymbolAsync": 5, "MemcpyPeerAsync": 5,
    "EventRecord": 1, "LaunchKernel": 5, "MemPrefetchAsync": 3, "MallocAsync": 2,
    "FreeAsync": 1, "StreamSynchronize": 0, "StreamWaitEvent": 0, "StreamQuery": 0,
}
_CALL = re.compile(rb"\b([A-Za-z_]\w*+)\s*\(")
# a launch's brackets: '<<<' and '>>>', or as nvcc also reads them with blanks inside ('<< <',
# '>> >': LCH002 writes them without)
LAUNCH = re.compile(LAUNCH_OPENING)
# LAUNCH less its leading '(?<!<)', the byte before tested after: a pattern that starts with
# '<<' is searched by skipping to that text (the lookbehind has the engine try every byte). A
# match after a '<' hides no launch: none starts inside it ('<' before its second byte, blanks,
# its last '<' is followed by no '<'), nor does one start where a launch covers
_LAUNCH_TEXT = re.compile(LAUNCH_OPENING.removeprefix(rb"(?<!<)"))
assert LAUNCH_OPENING.startswith(rb"(?<!<)<<")
_LAUNCH_CLOSING = re.compile(rb">>(?:\s|\\\r?\n)*>")
_GGL = b"hipLaunchKernelGGL"  # a launch whose stream is its fifth argument
# libraries whose work runs on a stream the program sets: those with a SetStream call
_SET_STREAM_SUFFIX = "SetStream"
_RUNTIME_LIBRARIES = ("runtime", "driver")
# the host's waits (STM003 reads them): found by the one scan of a file for the calls the stream
# rules read, with those null_stream_uses reads
HOST_WAITS = frozenset({"hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"})
# in HIP spelling: is_null_stream reads CUDA names (cudaStreamLegacy, (CUstream)0) as HIP's
NULL_STREAMS = {"0", "NULL", "nullptr", "hipStreamLegacy", "(hipStream_t)0", "0L",
                "hipStream_t(0)", "hipStreamDefault"}
_WORD = re.compile(r"[A-Za-z_]\w*")


@functools.lru_cache(maxsize=4096)
def is_null_stream(text: str, tables: ApiTables) -> bool:
    """Does the stream expression ``text`` name the null stream (in CUDA or HIP spelling)?
    Kept for the last texts asked: a file names its few streams again and again."""
    return _WORD.sub(lambda m: hip_name(tables, m.group()), text.replace(" ", "")) in NULL_STREAMS


@dataclass(frozen=True)
class Launch:
    """A ``kernel<<<grid, block[, shared[, stream]]>>>`` launch: where ``<<<`` starts, where
    ``>>>`` starts, and its stream ("0", the null stream, when the launch names none)."""

    start: int
    close: int
    stream: str


def launches(ctx: RuleContext, start: int, end: int):
    """The ``<<<...>>>`` launches in code in [start, end); the configuration is split at its
    top-level commas, so ``dim3(x, y)`` stays one argument."""
    data = ctx.data
    index = _file_launches(ctx)
    if index is None:  # runs of '<': where a scan of the range starts decides what it finds
        for match in code_matches(ctx, LAUNCH, start, end):
            close = _LAUNCH_CLOSING.search(data, match.end(), end)
            if close is not None:
                yield _launch(data, match.start(), match.end(), close.start())
        return
    # otherwise no two ``<<<`` overlap: the file's launches serve every range; one whose
    # ``>>>`` does not end before ``end`` is left out, as a search up to ``end`` would
    starts, opened, closes, made = index
    for position in range(bisect.bisect_left(starts, start), len(starts)):
        if opened[position] > end:
            return
        close = closes[position]
        if close is not None and close.end() <= end:
            launch = made.get(position)
            if launch is None:
                launch = made[position] = _launch(data, starts[position], opened[position],
                                                  close.start())
            yield launch


def has_launches(ctx: RuleContext) -> bool:
    """May ``launches`` find any launch in the file? (False: none in any range.)"""
    index = _file_launches(ctx)
    return index is None or any(close is not None for close in index[2])


def _file_launches(ctx: RuleContext):
    """(starts, opened, closes, made) for every ``<<<`` in code in the file: where it starts and
    ends, the first ``>>>`` after it (its match; None: none), and the launches read so far by
    position (each is read once, when a range first holds it); found once per file. None
    where ``<<<`` can overlap."""
    found = ctx.cache.get("streams.launches", False)
    if found is False:
        data = ctx.data
        if b"<<<<" in data:
            found = None
        else:
            code = ctx.code  # in code, as code_matches finds them: its '<' is not blanked
            matches = [match for match in _LAUNCH_TEXT.finditer(data)
                       if ((at := match.start()) == 0 or data[at - 1] != 60)  # no '<' before
                       and code[at] == 60]
            opened = [match.end() for match in matches]
            found = ([match.start() for match in matches], opened,
                     [_LAUNCH_CLOSING.search(data, at) for at in opened], {})
        ctx.cache["streams.launches"] = found
    return found


def _launch(data: bytes, start: int, opened: int, close: int) -> Launch:
    return Launch(start, close, _launch_stream(data[opened:close]))


@functools.lru_cache(maxsize=4096)
def _launch_stream(config: bytes) -> str:
    """The stream of a launch configuration ("0" where it names none). Kept per text: a
    file's launches repeat a few configurations, and generated code repeats them across files."""
    parts = _split(config)
    return parts[3] if len(parts) >= 4 else "0"


@dataclass(frozen=True)
class StreamApis:
    """HIP names of the APIs the stream rules look for, derived from the API tables."""

    runtime: frozenset[str]  # runtime and driver APIs (and the GGL launch)
    library: frozenset[str]  # functions of libraries that run work on a settable stream
    set_stream: frozenset[str]  # the calls that give such a library its stream
    # every spelling (CUDA's and HIP's, as bytes) of a call null_stream_uses acts on: a sync
    # copy or set, a call with a stream argument, a library call or a SetStream
    watched: frozenset[bytes] = frozenset()
    read: frozenset[bytes] = frozenset()  # those and the GGL launch: the calls it reads
    scanned: frozenset[bytes] = frozenset()  # those and the spellings of HOST_WAITS


@functools.lru_cache(maxsize=8)
def stream_apis(tables: ApiTables) -> StreamApis:
    """The stream-relevant APIs of ``tables``, each by its HIP name (or its CUDA name where it
    has none): match a written name through ``hip_name`` to find it in either spelling."""
    entries = [e for e in tables.names.values() if e.kind == "function"]
    libraries = {e.library for e in entries if _SET_STREAM_SUFFIX in e.cuda
                 and e.library not in _RUNTIME_LIBRARIES}
    library = frozenset(e.hip or e.cuda for e in entries if e.library in libraries)
    set_stream = frozenset(e.hip or e.cuda for e in entries if e.library in libraries
                           and re.search(_SET_STREAM_SUFFIX + r"(?:_v\d+)?$", e.cuda))
    library_calls = library | set_stream
    watched = frozenset(name.encode() for name in {
        name for entry in tables.names.values() for name in (entry.cuda, entry.hip)
        if name and _acted_on(hip_name(tables, name), library_calls)} | {
        "hip" + call for call in _STREAM_ARGUMENT})
    return StreamApis(
        runtime=frozenset({e.hip or e.cuda for e in tables.names.values()
                           if e.library in _RUNTIME_LIBRARIES} | {"hipLaunchKernelGGL"}),
        library=library, set_stream=set_stream, watched=watched, read=watched | {_GGL},
        scanned=watched | {_GGL} | _spellings_of(tables, HOST_WAITS),
    )


def _acted_on(name: str, library_calls: frozenset[str]) -> bool:
    """Does null_stream_uses act on a call whose HIP name is ``name``?"""
    return name in library_calls or (name.startswith("hip") and (
        name[3:] in _STREAM_ARGUMENT or _SYNC_CALL.fullmatch(name) is not None))


def api_calls(ctx: RuleContext, start: int, end: int, names: frozenset[str]):
    """(match, HIP name) for each call in code in [start, end) whose HIP name (the callee's in
    the API tables: ``hip_name``) is one of ``names``; ``match`` spans the callee and the
    opening parenthesis."""
    hip_names = ctx.cache.setdefault("streams.hip_names", {})  # callee -> HIP name

    def hip(callee: bytes) -> str:
        name = hip_names.get(callee)
        if name is None:
            name = hip_names[callee] = hip_name(ctx.tables, callee.decode("ascii", "replace"))
        return name

    calls = _calls_of(ctx, ("streams.api_calls", names), _spellings_of(ctx.tables, names))
    for match in _within(calls, start, end):
        yield match, hip(match.group(1))


@functools.lru_cache(maxsize=16)
def _spellings_of(tables: ApiTables, names: frozenset[str]) -> frozenset[bytes]:
    """Every callee (as bytes) whose HIP name (``hip_name``) is one of ``names``."""
    written = {n for entry in tables.names.values() for n in (entry.cuda, entry.hip) if n}
    return frozenset(n.encode() for n in written | names if hip_name(tables, n) in names)


def _calls_where(ctx: RuleContext, key, keep) -> tuple[list[int], list[re.Match]]:
    """(starts, matches) of the calls (``_CALL``) in code in the file whose callee ``keep``
    accepts, computed once per ``key``; the file is scanned once for every call, for every
    such list. No match starts inside another, nor does cutting the text at a range's end
    make a new one: the matches within a range are what a scan of the range finds
    (``_within``)."""
    found = ctx.cache.get(key)
    if found is None:
        every = ctx.cache.get("streams.calls")
        if every is None:  # comments and literals included: most calls are dropped unread
            matches = list(_CALL.finditer(ctx.data))
            every = ctx.cache["streams.calls"] = (matches, {match.group(1) for match in matches})
        matches, callees = every
        kept = {callee for callee in callees if keep(callee)}  # once per name, not per call
        in_code = ctx.in_code
        matches = [match for match in matches if match.group(1) in kept and in_code(match.start())]
        found = ctx.cache[key] = ([match.start() for match in matches], matches)
    return found


def _calls_of(ctx: RuleContext, key, spellings: frozenset[bytes]) -> tuple[list[int], list[re.Match]]:
    """What ``_calls_where`` finds for the callees ``spellings``, computed once per ``key``:
    only calls of those are looked for (``_call_patterns``). Those of the callees the stream
    rules read (``StreamApis.scanned``) come from one scan of the file for all of them, where
    it is made or they are many; a few names of a file not scanned so are looked for alone."""
    found = ctx.cache.get(key)
    if found is None:
        every = ctx.cache.get("streams.scanned")
        if every is None and len(spellings) <= _WHOLE_NAMES:
            matches = _scan_calls(ctx, spellings)  # a few names: their own scan costs less
        elif _subset(spellings, scanned := stream_apis(ctx.tables).scanned):
            if every is None:
                every = ctx.cache["streams.scanned"] = _scan_calls(ctx, scanned)
            matches = [match for match in every if match.group(1) in spellings]
        else:
            matches = _scan_calls(ctx, spellings)
        found = ctx.cache[key] = ([match.start() for match in matches], matches)
    return found


@functools.lru_cache(maxsize=16)
def _subset(names: frozenset[bytes], of: frozenset[bytes]) -> bool:
    """``names <= of``, once per pair of sets (thousands of names: a file's test cost more
    than its scan for them)."""
    return names <= of


def _scan_calls(ctx: RuleContext, spellings: frozenset[bytes]) -> list[re.Match]:
    """The calls (``_CALL``) in code in the file whose callee is one of ``spellings``, in
    order (matches in ``ctx.code``: same offsets and groups as in the file).

    Searched in ``ctx.code`` (comments and literals blanked) rather than the file, which
    finds the same calls with no test of each for a literal around it: a call in code is
    written alike in both, and nothing else of the file matches there (its name bytes
    are blanked); a literal ends in a quote, ``>``, ``/`` or before a newline, never in a name
    byte, so the byte before a name tests alike; no match hides another in either text. A
    match whose blanks before ``(`` hold a blanked comment or literal is no call in the file
    and is dropped."""
    data, code = ctx.data, ctx.code
    matches = [match for prefix, pattern in _call_patterns(spellings)
               if prefix in code  # a byte search, where the regex engine tries each first byte
               for match in pattern.finditer(code)
               if match.group(1) in spellings
               and ((at := match.start()) == 0 or code[at - 1] not in WORD_BYTES)
               and ((gap := match.end(1)) == (paren := match.end() - 1)
                    or data[gap:paren] == code[gap:paren])]
    matches.sort(key=_start)
    return matches


_WHOLE_NAMES = 256  # more callees than this: a trie of their first 10 bytes
_start = operator.methodcaller("start")


@functools.lru_cache(maxsize=16)
def _call_patterns(spellings: frozenset[bytes]) -> tuple[tuple[bytes, re.Pattern], ...]:
    """Regexes that together find, among others, every call ``_CALL`` finds whose callee is one
    of ``spellings``, as the same match where it starts a word: one per first byte of the
    callees, each their names as a trie (which begins with what they all begin with: the
    engine skips to that text, and follows one branch), the rest of the name, ``(``. A match
    inside a word runs to that word's end, so it hides no call after it; no two regexes
    match at the same offset. Of thousands of names, their first 10 bytes make the tries: a
    few milliseconds to compile (the whole names take a tenth of a second), and few calls of
    other names match. Each comes with what all its names begin with: a text without it holds
    no match (``hip`` in a CUDA file)."""
    depth = None if len(spellings) <= _WHOLE_NAMES else 10
    by_first: dict[bytes, set[bytes]] = {}
    for name in spellings:
        by_first.setdefault(name[:1], set()).add(name[:depth])
    return tuple((os.path.commonprefix(sorted(names)),
                  re.compile(rb"(" + _trie(names) + rb"\w*+)\s*\("))
                 for _, names in sorted(by_first.items()))


def _trie(words: set[bytes]) -> bytes:
    """A regex matching exactly ``words``, their common prefixes written once."""
    rests: dict[bytes, set[bytes]] = {}
    for word in words:
        if word:
            rests.setdefault(word[:1], set()).add(word[1:])
    branches = [re.escape(first) + _trie(rest) for first, rest in sorted(rests.items())]
    if not branches:
        return b""
    either = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
    return b"(?:" + either + b")?" if b"" in words else either


def _within(calls: tuple[list[int], list[re.Match]], start: int, end: int):
    """The matches of ``calls`` (from ``_calls_where``) that lie in [start, end)."""
    starts, matches = calls
    for index in range(bisect.bisect_left(starts, start), len(starts)):
        match = matches[index]
        if match.end() > end:
            return
        yield match


def _acts_on(callee: bytes, watched: frozenset[bytes]) -> bool:
    """Is ``callee`` a call null_stream_uses reads: a GGL launch, one of ``watched``, or a
    library's ``set_stream``? (The rest are user functions, macros and APIs that use no
    stream.)"""
    return callee in watched or callee == _GGL or b"set_stream" in callee


def null_stream_uses(ctx: RuleContext, body: Block) -> list[tuple[int, str]]:
    """(offset, what) for each use of the null stream in ``body``."""
    data, code = ctx.data, ctx.code
    tables = ctx.tables
    start, end = body.open, body.close
    uses = _null_launches(ctx, start, end)
    apis = stream_apis(tables)
    library, set_stream = None, False
    calls = ctx.cache.get("streams.acted_on")
    if calls is None:  # a library's set_stream is named by the program: a file that may call
        # one is scanned for every call
        calls = (_calls_where(ctx, "streams.acted_on", lambda callee: _acts_on(callee, apis.watched))
                 if b"set_stream" in data else _calls_of(ctx, "streams.acted_on", apis.read))
    kinds = ctx.cache.setdefault("streams.callee_kinds", {})
    # stream argument as written -> is it the null stream? (a file names its few streams)
    null_texts = ctx.cache.setdefault("streams.null_texts", {})
    starts, matches = calls
    for position in range(bisect.bisect_left(starts, start), len(starts)):  # _within, inline
        match = matches[position]
        if match.end() > end:
            break
        callee = match.group(1)
        if callee == _GGL:
            stream = _argument(ctx, match.end() - 1, 4)
            if stream and _names_null_stream(stream, null_texts, tables):
                uses.append((match.start(), "a kernel launch on the null stream"))
            if callee not in apis.watched:
                continue
        kind = kinds.get(callee)
        if kind is None:
            kind = kinds[callee] = _callee_kind(callee, tables, apis)
        what, written, index = kind
        if what == "stream argument":
            # _argument, inline: most lists are one lookup of their line
            paren = match.end() - 1
            line_end = data.find(b"\n", paren, paren + 256)
            stream = None
            if line_end != -1:
                window = data[paren:line_end]
                stream = _ARGUMENTS.get((window, index))
                if stream is not None and not code.startswith(window, paren):
                    stream = None
            if stream is None:
                stream = _argument(ctx, paren, index)
                if stream is None:
                    continue
            null = null_texts.get(stream) if stream else True
            if null is None:
                null = _names_null_stream(stream, null_texts, tables)
            if null:
                uses.append((match.start(), written))
        elif what == "sync":
            uses.append((match.start(), written))
        elif what == "set stream":
            set_stream = True
        elif what == "library" and library is None:
            library = (match.start(), written)
    if library is not None and not set_stream:
        uses.append(library)
    uses.sort()
    return uses


_NULL_LAUNCH = "a kernel launch on the null stream"


def _null_launches(ctx: RuleContext, start: int, end: int) -> list[tuple[int, str]]:
    """(offset, what) for each launch ``launches`` finds in [start, end) on the null stream;
    each launch's stream is judged once per file."""
    index = _file_launches(ctx)
    tables = ctx.tables
    if index is None:
        return [(launch.start, _NULL_LAUNCH) for launch in launches(ctx, start, end)
                if is_null_stream(launch.stream, tables)]
    starts, opened, closes, made = index
    position = bisect.bisect_left(starts, start)
    if position == len(starts) or opened[position] > end:
        return []  # no launch here (most bodies of a file that has some)
    data = ctx.data
    # configuration as written -> on the null stream? (a file repeats a few configurations)
    nulls = ctx.cache.setdefault("streams.null_configurations", {})
    found = []
    for position in range(position, len(starts)):  # what launches() yields, inline
        if opened[position] > end:
            break
        close = closes[position]
        if close is not None and close.end() <= end:
            config = data[opened[position] : close.start()]
            null = nulls.get(config)
            if null is None:
                null = nulls[config] = is_null_stream(_launch_stream(config), tables)
            if null:
                found.append((starts[position], _NULL_LAUNCH))
    return found


# (text from a call's '(' to the end of its line, argument index) -> argument_text's answer,
# for lists that close on that line in code with no comment or literal: argument_text reads
# only those bytes then (the spans of a list split by its window alone, calls._WINDOW_SPANS).
# Generated and repetitive code repeats its lines: most calls are one lookup
_ARGUMENTS: dict[tuple[bytes, int], bytes] = {}


def _argument(ctx: RuleContext, paren: int, index: int) -> bytes | None:
    """``argument_text(ctx, paren, index)``, kept per text of the list's line (``_ARGUMENTS``)."""
    data = ctx.data
    line_end = data.find(b"\n", paren, paren + 256)
    if line_end == -1:
        return argument_text(ctx, paren, index)
    window = data[paren:line_end]
    key = (window, index)
    found = _ARGUMENTS.get(key)
    if found is not None:
        if ctx.code.startswith(window, paren):  # no comment or literal there: bytes as read
            return found
        return argument_text(ctx, paren, index)
    found = argument_text(ctx, paren, index)
    if found is not None and ctx.code.startswith(window, paren):
        close = close_of(ctx, paren)
        if close is not None and close < line_end:
            if len(_ARGUMENTS) >= 8192:
                _ARGUMENTS.clear()
            _ARGUMENTS[key] = found
    return found


def _names_null_stream(written: bytes, null_texts: dict[bytes, bool], tables: ApiTables) -> bool:
    """``is_null_stream`` of the argument ``written``, kept per text in ``null_texts``."""
    null = null_texts.get(written)
    if null is None:
        null = null_texts[written] = is_null_stream(
            written.decode("utf-8", "replace").strip(), tables)
    return null


def _callee_kind(callee: bytes, tables: ApiTables, apis: StreamApis) -> tuple[str, str, int]:
    """(what null_stream_uses does with a call of ``callee``, what it reports of a use of the
    null stream there, the index of its stream argument): a sync copy or set, a call with a
    stream argument, a library's SetStream, a library call, or "other"."""
    written = callee.decode("ascii", "replace")
    name = hip_name(tables, written)
    if _SYNC_CALL.fullmatch(name):
        return "sync", f"{written} (runs on the null stream)", -1
    if name.startswith("hip") and name[3:] in _STREAM_ARGUMENT:
        return "stream argument", f"{written} on the null stream", _STREAM_ARGUMENT[name[3:]]
    if name in apis.set_stream or b"set_stream" in callee:
        return "set stream", written, -1
    if name in apis.library:
        return ("library", f"{written} (library work runs on the null stream unless a stream "
                "is set)", -1)
    return "other", written, -1


_SPLIT_MARK = re.compile(rb"[,()\[\]{}]")


def _split(config: bytes) -> list[str]:
    """``config`` split at its commas outside brackets and template-ids (``Traits<A, B>::n``
    is one part, as in a call's arguments: ``calls.template_ids_whole``), each part stripped
    (literals are not skipped)."""
    spans, depth, part_start = [], 0, 0
    for mark in _SPLIT_MARK.finditer(config):
        byte = config[mark.start()]
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            depth -= 1
        elif depth == 0:  # ','
            spans.append((part_start, mark.start()))
            part_start = mark.start() + 1
    spans.append((part_start, len(config)))
    if len(spans) > 1 and b"<" in config:
        spans = template_ids_whole(config, spans)
    return [config[begin:end].decode("utf-8", "replace").strip() for begin, end in spans]
