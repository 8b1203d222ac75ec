"""Progress of long convert and lint runs: files done of the total, files/s and lines/s, on a
rich line on stderr, only on a terminal and only once a run has taken a while; and the lines
other commands print while they work (``say``), escaped for the terminal."""

from __future__ import annotations

import sys
import time
from typing import Callable

SHOW_AFTER = 1.0  # seconds: a run shorter than this shows nothing


class ProgressReporter:
    """Called once per file done (``reporter(total, lines)``); shows nothing for a short run,
    then a transient bar with the count and the rates since the run began."""

    def __init__(self, verb: str, console=None, clock: Callable[[], float] = time.monotonic,
                 show_after: float = SHOW_AFTER) -> None:
        self.verb = verb
        self.console = console
        self.clock = clock
        self.show_after = show_after
        self.start = clock()
        self.done = 0
        self.lines = 0
        self.total = 0
        self.bar = None
        self.task = None

    def __call__(self, total: int, lines: int) -> None:
        """One more file done, of ``total`` in this run; ``lines``: how many lines it had."""
        self.done += 1
        self.lines += lines
        self.total = total
        if self.bar is None:
            if self.clock() - self.start < self.show_after:
                return
            self._show()
        self.bar.update(self.task, completed=self.done, total=total)

    def rates(self) -> str:
        """``12.5 files/s, 8,100 lines/s`` over the run so far."""
        elapsed = max(self.clock() - self.start, 1e-9)
        return f"{self.done / elapsed:,.1f} files/s, {self.lines / elapsed:,.0f} lines/s"

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=20),
                            MofNCompleteColumn(), TextColumn("files"), _rates_column(self),
                            console=self.console or Console(stderr=True), transient=True,
                            get_time=self.clock, redirect_stdout=False)  # stdout: the report
        self.bar.start()
        self.task = self.bar.add_task(self.verb, total=self.total, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _rates_column(reporter: ProgressReporter):
    """A column showing the reporter's rates, recomputed at each refresh (so they move while a
    large file is being processed)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RatesColumn(ProgressColumn):
        def render(self, task) -> Text:
            return Text(reporter.rates())

    return RatesColumn()


def say(line: str) -> None:
    """A line on stderr (a step of a long command, an error), its control characters escaped:
    a file name cannot send the terminal escape sequences."""
    from ..output.terminal import escaped

    sys.stderr.write(escaped(line) + "\n")
    sys.stderr.flush()


def reporter_for(verb: str) -> ProgressReporter | None:
    """A reporter when stderr is a terminal; None otherwise (pipes and logs get no progress)."""
    return ProgressReporter(verb) if sys.stderr.isatty() else None
