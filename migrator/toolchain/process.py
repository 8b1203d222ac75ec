"""Running a program under a time limit, with bounded output, leaving no process behind.

The program runs in a session of its own. When it ends, or its time is up, every process of the
run is killed: its process group, and (where /proc shows them) its descendants and any process
that carries the run's mark in its environment or holds one of its output pipes, which finds
children that left the group with ``setsid()`` and were handed to init. Reading stops at a
deadline whatever happens, so a survivor holding a pipe cannot stall the caller; only the head
and tail of each stream are kept, so a program printing gigabytes cannot exhaust memory.
"""

from __future__ import annotations

import collections
import hashlib
import os
import secrets
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of a stream kept: its first and last halves
KILL_GRACE = 2.0  # seconds to read what is left in the pipes once the run's processes are killed
RUN_MARK = "ROCMIGRATE_VALIDATE_RUN"  # names the run in the environment its processes inherit
_CHUNK = 65536


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
    start = time.perf_counter()
    try:
        process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True,
                                   env={**(os.environ if env is None else env), RUN_MARK: token})
    except OSError as err:
        return ProcessOutcome(None, 0.0, False, "", "", error=f"cannot run "
                              f"{Path(command[0]).name}: {err.strerror}")
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


def _kill_run(pid: int, token: str, pipes: set[str]) -> int:
    """SIGKILL the run's process group and every process found to belong to the run; returns
    how many were found outside the group's leader."""
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
    """Live processes of the run started as ``pid``: its descendants, and every process whose
    environment holds the run's mark or that holds one of ``pipes`` open, except the other
    children of this process (runs of their own). Empty without /proc."""
    mark = f"{RUN_MARK}={token}".encode()
    parents: dict[int, int] = {}
    found: set[int] = set()
    try:
        entries = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    me = os.getpid()
    for other in entries:
        if other == me:
            continue
        try:
            with open(f"/proc/{other}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] == b"Z":
            continue  # a zombie: nothing left to kill
        parents[other] = int(fields[1])
        if parents[other] == me and other != pid:
            # another run started by this process (a parallel build): between fork and exec it
            # holds a copy of every pipe open here, this run's included, and is no part of it
            continue
        if _carries(other, mark) or _holds(other, pipes):
            found.add(other)
    children: dict[int, list[int]] = collections.defaultdict(list)
    for child, parent in parents.items():
        children[parent].append(child)
    stack, descendants = [pid], set()
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in descendants:
                descendants.add(child)
                stack.append(child)
    return found | descendants


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
