"""Who wrote each line of HEAD, for most files in one pass over the history instead of one
``git blame`` per file.

``git log --reverse --first-parent -p -U0`` lists, oldest first, every change of the
first-parent chain as hunks; replaying them keeps, for every line of every file, the author
of the commit that last put it there. That is what ``git blame`` computes, by the same diffs,
for a file whose changes all come from that chain as they are: one that no merge changed
(against its first parent; such a file's lines may come from a side branch) and no rename
led to (blame follows renames). Those files, binary ones and anything else the replay
cannot read come back as "not traced", and the caller blames them one by one.

Blame walks a file's whole history for each file, so its cost grows with files x commits;
the replay reads each change once.

Authors are (name, email) as ``.mailmap`` maps them (git's ``%aN``/``%aE``, what blame
gives): ``owners.People`` then joins the identities of one person.
"""

from __future__ import annotations

import re
from collections import Counter

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class _Replay:
    def __init__(self) -> None:
        self.lines: dict[bytes, list[int]] = {}  # path -> author id of each line
        self.untraced: set[bytes] = set()
        self.authors: dict[tuple[str, str], int] = {}  # (name, email) -> author id
        self.commits = 0
        self.author = 0
        self.merge = False
        self.readable = True  # False: a path the replay cannot name (git quoted it)
        self._start_file()

    def _start_file(self) -> None:
        self.old: bytes | None = None
        self.new: bytes | None = None
        self.header_path: bytes | None = None
        self.created = self.deleted = self.renamed = False
        self.hunks: list[tuple[int, int, int]] = []  # (old start, old count, new count)

    def commit(self, header: bytes) -> None:
        self.finish_file()
        _, name, email, parents = (header.split(b"\t", 3) + [b"", b"", b""])[:4]
        author = (name.decode("utf-8", "replace"), email.decode("utf-8", "replace"))
        self.author = self.authors.setdefault(author, len(self.authors))
        self.merge = len(parents.split()) > 1
        self.commits += 1

    def diff_header(self, line: bytes) -> None:
        """``diff --git a/X b/Y``: the file's names come from the lines that follow, or, for
        an empty or binary file, which has none, from this line when X is Y. A name git
        quoted (control characters, quotes) stops the replay."""
        self.finish_file()
        if line.startswith(b'diff --git "') or b' "b/' in line:
            self.readable = False
        self.header_path = _unrenamed_path(line)

    def file_line(self, line: bytes) -> None:
        """The extended header lines between ``diff --git`` and the first hunk."""
        if line.startswith(b"--- "):
            self.old = None if line[4:] == b"/dev/null" else _strip_prefix(line[4:], b"a/")
        elif line.startswith(b"+++ "):
            self.new = None if line[4:] == b"/dev/null" else _strip_prefix(line[4:], b"b/")
        elif line.startswith(b"new file mode"):
            self.created = True
        elif line.startswith(b"deleted file mode"):
            self.deleted = True
        elif line.startswith((b"rename to ", b"copy to ")):
            self.untraced.add(line.split(b" ", 2)[2])
            self.renamed = True
        elif line.startswith(b"rename from "):
            self.lines.pop(line.split(b" ", 2)[2], None)
        elif line.startswith(b"Binary files "):
            if self.header_path is None:  # named by "rename to" if renamed
                self.readable = self.readable and self.renamed
            else:
                self.untraced.add(self.header_path)

    def hunk(self, line: bytes) -> int:
        """A hunk header: remembers it and returns how many content lines follow."""
        match = _HUNK.match(line)
        if match is None:
            self.readable = False
            return 0
        old_start, old_count, _, new_count = match.groups()
        old_count = 1 if old_count is None else int(old_count)
        new_count = 1 if new_count is None else int(new_count)
        self.hunks.append((int(old_start), old_count, new_count))
        return old_count + new_count

    def finish_file(self) -> None:
        """Apply the hunks read for the current file (last first, so earlier positions hold)."""
        path = self.new if self.new is not None else self.old
        if path is None and (self.created or self.deleted):  # an empty or binary file
            path = self.header_path
            self.new = None if self.deleted else path
        if path is not None:
            if self.merge:
                self.untraced.add(path)
            if self.new is None or self.deleted:
                self.lines.pop(path, None)
            elif path not in self.untraced:
                authors = [] if self.created else self.lines.get(path)
                if authors is None:  # changed, yet never seen added: history incomplete
                    self.untraced.add(path)
                else:
                    for start, old_count, new_count in reversed(self.hunks):
                        at = start - 1 if old_count else start
                        authors[at:at + old_count] = [self.author] * new_count
                    self.lines[path] = authors
        self._start_file()

    def result(self) -> dict[str, Counter]:
        """Lines per (name, email) of each traced file."""
        names = {number: name for name, number in self.authors.items()}
        traced = {}
        for path, authors in self.lines.items():
            if path in self.untraced:
                continue
            counts = Counter(authors)
            traced[path.decode("utf-8", "surrogateescape")] = Counter(
                {names[number]: count for number, count in counts.items()})
        return traced


def _strip_prefix(name: bytes, prefix: bytes) -> bytes:
    """The path of a ``--- a/P`` or ``+++ b/P`` line (git ends it with a tab when P holds a
    space)."""
    if name.endswith(b"\t") and b" " in name:
        name = name[:-1]
    return name[len(prefix):] if name.startswith(prefix) else name


def _unrenamed_path(line: bytes) -> bytes | None:
    """The path of ``diff --git a/P b/P`` (a file under one name), None when the two names
    differ."""
    rest = line[len(b"diff --git "):]
    if len(rest) < 5 or (len(rest) - 5) % 2:
        return None
    half = (len(rest) - 5) // 2
    old, new = rest[2:2 + half], rest[-half:] if half else b""
    return old if rest[:2] == b"a/" and rest[2 + half:2 + half + 3] == b" b/" and old == new \
        else None


def lines_by_author(repo, prefix: str, limit: int) -> dict[str, Counter] | None:
    """Lines of HEAD per author, (name, email) after ``.mailmap``, for each file under
    ``prefix`` the replay traces (repository paths); None when it cannot be used at all: more than ``limit`` commits, a git too old
    for ``--diff-merges``, a path it cannot read, or git failing."""
    try:
        process = repo.git(c="core.quotePath=false").log(
            "--reverse", "--first-parent", "--diff-merges=first-parent", "-p", "-U0",
            "--no-color", "--no-ext-diff", "--no-textconv", "-M", f"-n{limit + 1}",
            "--format=%x00%H%x09%aN%x09%aE%x09%P", "HEAD", "--", prefix or ".",
            as_process=True)
    except Exception:
        return None
    replay = _Replay()
    content = 0  # content lines of the current hunk still to skip
    try:
        for line in process.stdout:
            line = line.rstrip(b"\n")
            if content:
                if not line.startswith(b"\\"):  # "\ No newline at end of file" is not a line
                    content -= 1
                continue
            if line.startswith(b"\x00"):
                replay.commit(line[1:])
            elif line.startswith(b"diff --git "):
                replay.diff_header(line)
            elif line.startswith(b"@@"):
                content = replay.hunk(line)
            elif line:
                replay.file_line(line)
        replay.finish_file()
        process.wait()
    except Exception:
        return None
    finally:
        try:
            process.proc.kill()
        except Exception:
            pass
    if replay.commits > limit or not replay.readable:
        return None
    traced = replay.result()
    if prefix:  # a file moved in from outside the prefix looked added: blame follows it
        for path in _renamed_into(repo, prefix, limit):
            traced.pop(path, None)
    return traced


def _renamed_into(repo, prefix: str, limit: int) -> set[str]:
    """Paths under ``prefix`` a rename from anywhere in the repository led to."""
    try:
        text = repo.git(c="core.quotePath=false").log(
            "--first-parent", "--diff-merges=first-parent", "-M", "--diff-filter=R",
            "--name-status", "--format=", f"-n{limit}", "HEAD")
    except Exception:
        return set()
    inside = prefix.rstrip("/") + "/"
    return {fields[-1] for fields in (line.split("\t") for line in text.splitlines())
            if len(fields) == 3 and fields[-1].startswith(inside)}
