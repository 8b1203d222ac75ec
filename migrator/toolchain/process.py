"""Running a program under a time limit, with bounded output, leaving no process behind.

The program runs in a session of its own. When it ends, or its time is up, every process of the
run is killed: its process group, and (where /proc shows them) its descendants and any process
that carries the run's mark in its environment or holds one of its output pipes. On Linux this
process is also a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``, set once per process): a
descendant whose parent exits is handed to it rather than to init, so a daemon that left the
session with ``setsid()``, cleared its environment and closed its descriptors is still found.
Such an orphan is the run's when it is in the run's session, or when it started after the run's
program and no other run of this process still going had started by then; an orphan that
started while several runs were going is killed by the last of them to end, so a run never kills
a process of a sibling run still going. Elsewhere (no /proc, no subreaper) such a daemon, once
its parent has exited, may survive the run. Reading stops at a deadline whatever happens, so a
survivor holding a pipe cannot stall the caller; only the head and tail of each stream are kept,
so a program printing gigabytes cannot exhaust memory.
"""

from __future__ import annotations

import collections
import hashlib
import os
import secrets
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of a stream kept: its first and last halves
KILL_GRACE = 2.0  # seconds to read what is left in the pipes once the run's processes are killed
RUN_MARK = "ROCMIGRATE_VALIDATE_RUN"  # names the run in the environment its processes inherit
_CHUNK = 65536
_PR_SET_CHILD_SUBREAPER = 36  # prctl option (linux/prctl.h)


@dataclass
class _Run:
    start: int | None  # when its program started, in clock ticks since boot (None: unknown)
    ending: bool = False  # its processes are being killed


_lock = threading.Lock()  # held while a run's program starts and while runs' processes are sought
_runs: dict[int, _Run] = {}  # the runs going in this process, by their program's pid
_subreaper_of: int | None = None  # the process that has asked to be a subreaper


def _forget_runs() -> None:
    """A forked child runs none of its parent's runs (and may not inherit a held lock)."""
    global _lock, _runs
    _lock, _runs = threading.Lock(), {}


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_runs)


@dataclass
class ProcessOutcome:
    rc: int | None  # None: killed at the time limit, or never started
    seconds: float  # until the program ended (or its time was up)
    timed_out: bool
    stdout: str
    stderr: str
    error: str | None = None  # why it could not start
    left_running: int = 0  # processes it left behind, killed after it ended


class _Capture:
    """A stream's first and last ``limit // 2`` bytes, its length, and a hash of all of it."""

    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.total = 0
        self.digest = hashlib.sha256()

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.digest.update(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= self.half:
                self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        """The stream as text; when it was longer than the limit, its head and tail around a
        line that says how much was left out, with a hash of the whole stream (two outputs
        compared by this text differ whenever the streams differ)."""
        tail = b"".join(self.tail)[-self.half:] if self.half else b""
        left_out = self.total - len(self.head) - len(tail)
        if left_out <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        return (self.head.decode("utf-8", "replace")
                + f"\n[rocmigrate: {left_out} bytes of output left out; sha256 of all "
                  f"{self.total} bytes: {self.digest.hexdigest()}]\n"
                + tail.decode("utf-8", "replace"))


def run_process(command: list[str], cwd: Path | None, timeout: float,
                output_limit: int = OUTPUT_LIMIT,
                env: dict[str, str] | None = None) -> ProcessOutcome:
    """Run ``command`` in ``cwd`` (with ``env``, default this process's environment) for at
    most ``timeout`` seconds; returns within about ``timeout + KILL_GRACE`` seconds whatever
    the program does, with every process it started killed."""
    token = secrets.token_hex(16)
    _become_subreaper()
    start = time.perf_counter()
    with _lock:  # no run seeks its processes while this one's program is between fork and exec
        try:
            process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True,
                                       env={**(os.environ if env is None else env),
                                            RUN_MARK: token})
        except OSError as err:
            return ProcessOutcome(None, 0.0, False, "", "", error=f"cannot run "
                                  f"{Path(command[0]).name}: {err.strerror}")
        run = _runs[process.pid] = _Run(_start_tick(process.pid))
    captures = {process.stdout: _Capture(output_limit), process.stderr: _Capture(output_limit)}
    pipes = {f"pipe:[{os.fstat(stream.fileno()).st_ino}]" for stream in captures}
    selector = selectors.DefaultSelector()
    for stream in captures:
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ)
    exit_signal = _exit_notifier(process.pid)
    if exit_signal is not None:
        selector.register(exit_signal, selectors.EVENT_READ)
    deadline = start + timeout
    try:
        timed_out = _read_until_exit(process.pid, selector, captures, deadline,
                                     polling=exit_signal is None)
        ended = time.perf_counter()
    finally:  # an interrupted run (Ctrl-C) leaves nothing running either
        left_running = _kill_run(process.pid, token, pipes)
        try:
            process.wait(KILL_GRACE)  # a process stuck in the kernel may not die at once
        except subprocess.TimeoutExpired:
            pass
        with _lock:
            if _runs.get(process.pid) is run:
                del _runs[process.pid]
    if exit_signal is not None:
        selector.unregister(exit_signal)
    grace = time.perf_counter() + KILL_GRACE
    while _registered(selector):
        remaining = grace - time.perf_counter()
        if remaining <= 0:
            break
        _read_ready(selector, captures, remaining)
    selector.close()
    for stream in captures:
        stream.close()
    if exit_signal is not None:
        os.close(exit_signal)
    stdout, stderr = (capture.text() for capture in captures.values())
    return ProcessOutcome(None if timed_out else process.returncode,
                          round(min(ended, deadline) - start, 4), timed_out, stdout, stderr,
                          left_running=0 if timed_out else left_running)


def _read_until_exit(pid: int, selector: selectors.BaseSelector, captures: dict,
                     deadline: float, polling: bool) -> bool:
    """Read the pipes until the process exits (False) or the deadline passes (True)."""
    while not _has_exited(pid):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return True
        _read_ready(selector, captures, min(remaining, 0.005) if polling else remaining)
    return False


def _read_ready(selector: selectors.BaseSelector, captures: dict, wait: float) -> None:
    """Read whatever the pipes have (up to ``wait`` seconds for something to happen); a pipe
    at its end is unregistered."""
    for key, _ in selector.select(wait):
        if key.fileobj not in captures:
            continue  # the exit notifier: the caller checks the process
        try:
            chunk = os.read(key.fd, _CHUNK)
        except BlockingIOError:
            continue
        if chunk:
            captures[key.fileobj].add(chunk)
        else:
            selector.unregister(key.fileobj)


def _registered(selector: selectors.BaseSelector) -> list:
    return [key.fileobj for key in selector.get_map().values()]


def _exit_notifier(pid: int) -> int | None:
    """A file descriptor that turns readable when ``pid`` exits (Linux pidfd), or None: the
    caller then polls."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    """Has the process exited? It is not reaped (WNOWAIT), so its id, which is also its
    process group's, cannot be reused before the group is killed."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _become_subreaper() -> None:
    """Ask Linux to hand this process the orphans among its descendants (once per process: a
    forked child does not inherit the setting). Elsewhere, or when refused, nothing changes."""
    global _subreaper_of
    if _subreaper_of == os.getpid():
        return
    _subreaper_of = os.getpid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: orphans go to init, and only what /proc shows of them is found


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, ...,
    starttime at index 19), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def _start_tick(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[19])


def _kill_run(pid: int, token: str, pipes: set[str]) -> int:
    """SIGKILL the run's process group and every process found to belong to the run; returns
    how many were found outside the group's leader."""
    with _lock:
        if pid in _runs:
            _runs[pid].ending = True
    killed: set[int] = set()
    for _ in range(10):  # a process may fork while its siblings die
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        found = run_processes(pid, token, pipes) - {pid}
        if not found:
            break
        for other in found:
            try:
                os.kill(other, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
        killed |= found
        time.sleep(0.01)
    return len(killed)


def run_processes(pid: int, token: str, pipes: set[str]) -> set[int]:
    """Live processes of the run started as ``pid``: its descendants (those of the orphans
    handed to this process that are the run's, see ``_orphan_of``, included), and every process
    whose environment holds the run's mark or that holds one of ``pipes`` open, except the
    other children this process started (other runs, or programs of its own). Empty without
    /proc. Orphans handed to this process that have exited are reaped on the way."""
    mark = f"{RUN_MARK}={token}".encode()
    parents: dict[int, int] = {}
    found: set[int] = set()
    roots = [pid]
    try:
        entries = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    me, my_session = os.getpid(), os.getsid(0)
    with _lock:  # no other run's program is between fork and exec meanwhile
        for other in entries:
            if other == me:
                continue
            fields = _stat(other)
            if fields is None:
                continue
            parent, session = int(fields[1]), int(fields[3])
            adopted = parent == me and session != my_session and other not in _runs
            if fields[0] == b"Z":
                if adopted:  # an orphan handed to this process: nobody else will reap it
                    _reap(other)
                continue  # a zombie: nothing left to kill
            parents[other] = parent
            if parent == me and other != pid:
                if not adopted:
                    # another run started by this process (a parallel build), or a program of
                    # its own: between fork and exec it holds a copy of every pipe open here,
                    # this run's included, and is no part of it
                    continue
                if _orphan_of(pid, session, int(fields[19])):
                    roots.append(other)
            if _carries(other, mark) or _holds(other, pipes):
                found.add(other)
    children: dict[int, list[int]] = collections.defaultdict(list)
    for child, parent in parents.items():
        children[parent].append(child)
    stack, descendants = list(roots), set(roots) - {pid}
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in descendants:
                descendants.add(child)
                stack.append(child)
    return found | descendants


def _orphan_of(pid: int, session: int, start: int) -> bool:
    """Is an orphan handed to this process (in ``session``, started at clock tick ``start``)
    one of the run ``pid``'s? Yes in the run's session (no process joins another's session);
    no in another run's. Else yes when it started after the run's program and no other run
    still going had started by then: it may be theirs, and the last of them to end takes it.
    Ticks are coarse, so a run that started in the same tick counts as started by then. (A
    daemon of a program this process ran otherwise, started meanwhile, would count as the
    run's: the commands that run programs run them all through ``run_process``.)"""
    if session == pid:
        return True
    if session in _runs:
        return False
    run = _runs.get(pid)
    if run is None or run.start is None or start < run.start:
        return False
    return not any(other != pid and not going.ending and (going.start is None
                                                          or going.start <= start)
                   for other, going in _runs.items())


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _carries(pid: int, mark: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return mark in handle.read().split(b"\0")
    except OSError:
        return False


def _holds(pid: int, pipes: set[str]) -> bool:
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(f"{folder}/{name}") in pipes:
                return True
        except OSError:
            continue
    return False
