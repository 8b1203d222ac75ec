"""validate's limits on the programs it runs: the time limit holds against children that leave
the process group (setsid) or daemonize, no process of a run survives it (nor is one of another
run's killed), output is read within bounds, and a JSON line without a "result" key is reported
as what it is. Shell scripts stand in for the built binaries (run_binary runs whatever file it
is given).

No assert depends on the machine's speed: a run is judged by its outcome (timed out or not, its
output, its processes gone), never by how long it took. A child blocks for an hour, so a run that
waited for it would not return; the only clock is an outer bound (``OUTER_BOUND``) that only such
a hang reaches. A time limit starts at 1 s and grows (``LIMITS``) until the program's child had
started before it, which a loaded machine may not manage within 1 s.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

import pytest

from conftest import require, require_path
from migrator.toolchain import compilers, sides
from migrator.toolchain.process import _Capture, run_process, run_processes
from migrator.toolchain.sides import Build, Toolchain
from migrator.validate import run as validate_run
from migrator.validate.compare import Run
from migrator.validate.run import Original, ValidateOptions, VariantOutcome, run_binary, verdict

T = TypeVar("T")
LIMITS = (1, 4, 16, 64)  # seconds: a time limit, raised until the program's child starts in time
OUTER_BOUND = 60  # seconds past its time limit after which a run is taken to hang
# a child that leaves the process group with setsid(), writes its pid, and holds stdout open
SETSID_CHILD = 'setsid sh -c \'echo $$ > "$1"; exec sleep 3600\' child "$PWD/child.pid" &\n'
WAIT_FOR_CHILD = "while [ ! -s child.pid ]; do sleep 0.01; done\n"


@pytest.fixture(autouse=True)
def _posix_processes_and_proc(tmp_path: Path):
    require(os.name == "posix", "POSIX processes")
    require_path(Path("/proc/self/stat"), "Linux's /proc")
    yield
    for folder in (tmp_path, *(path for path in tmp_path.iterdir() if path.is_dir())):
        pid = written_pid(folder)  # a child a failed test left behind, sleeping for an hour
        try:
            if pid is not None and b"3600" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, 9)
        except OSError:
            pass  # gone


def program(folder: Path, body: str) -> Path:
    path = folder / "program.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def written_pid(folder: Path) -> int | None:
    """The pid the program's child wrote (None: it never started, or was killed first)."""
    try:
        text = (folder / "child.pid").read_text().strip()
    except OSError:
        return None
    return int(text) if text else None


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pid: int) -> bool:
    """Dead, or dying: SIGKILL takes effect when the process is next scheduled, so this waits up
    to OUTER_BOUND for it."""
    deadline = time.monotonic() + OUTER_BOUND
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def returns(bound: float, call: Callable[[], T]) -> T:
    """``call()``'s result, failing the test when it has not returned within ``bound`` seconds."""
    outcome: list = []

    def record() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as err:  # noqa: BLE001 - handed to the test's thread
            outcome.append((False, err))

    thread = threading.Thread(target=record, daemon=True)
    thread.start()
    thread.join(bound)
    assert outcome, f"still running after {bound} s: it waited for a process that never ends"
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def past_start(folder: Path, run: Callable[[int], T],
               started: Callable[[T], bool] = lambda outcome: True) -> tuple[T, int, int]:
    """``run(limit)`` for each of LIMITS until the program's child wrote its pid (and
    ``started`` holds for the outcome) before the limit: (outcome, limit, the child's pid)."""
    for limit in LIMITS:
        (folder / "child.pid").unlink(missing_ok=True)
        outcome = returns(limit + OUTER_BOUND, lambda: run(limit))
        pid = written_pid(folder)
        if pid is not None and started(outcome):
            return outcome, limit, pid
    raise AssertionError(f"the program's child never started within {LIMITS[-1]} s")


def test_the_time_limit_holds_against_a_setsid_child_holding_stdout(tmp_path: Path):
    binary = program(tmp_path, SETSID_CHILD + "echo started\nexec sleep 3600\n")
    run, limit, pid = past_start(tmp_path, lambda limit: run_binary(binary, tmp_path, limit))
    assert run.timed_out and run.rc is None
    assert f"killed after the time limit of {limit} s" in run.stderr_tail
    assert gone(pid), "the setsid child survived the run"


def test_a_setsid_child_left_behind_by_a_program_that_ended_is_killed(tmp_path: Path):
    """The program ends while its child holds stdout for an hour: the run does not wait for it."""
    binary = program(tmp_path, SETSID_CHILD + WAIT_FOR_CHILD +
                     'echo \'{"value": 1, "result": "PASS"}\'\necho PASS\n')
    run = returns(2 * OUTER_BOUND, lambda: run_binary(binary, tmp_path, OUTER_BOUND))
    assert not run.timed_out, "validate waited for the child holding stdout"
    assert run.rc == 0 and run.passed and run.json == {"value": 1, "result": "PASS"}
    assert gone(written_pid(tmp_path)), "the setsid child survived the run"
    assert "left running" in run.stderr_tail


def test_a_child_that_clears_its_environment_is_found_by_the_pipe_it_holds(tmp_path: Path):
    binary = program(tmp_path, "env -i setsid sh -c 'echo $$ > \"$0\"; exec sleep 3600' "
                     "\"$PWD/child.pid\" &\nexec sleep 3600\n")
    run, _, pid = past_start(tmp_path, lambda limit: run_binary(binary, tmp_path, limit))
    assert run.timed_out
    assert gone(pid), "the child without the run's environment survived the run"


def test_output_is_read_within_bounds(tmp_path: Path):
    binary = program(tmp_path, "head -c 60000000 /dev/zero | tr '\\0' x\necho\necho last line\n")
    run = run_binary(binary, tmp_path, 300.0)  # a bound against a hang only
    assert run.rc == 0 and run.json is None
    assert len(run.stdout) < 5 * 1024 * 1024  # kept: the head and the tail, not 60 MB
    assert run.stdout.startswith("xxxx") and run.stdout.endswith("x\nlast line\n")
    assert "bytes of output left out" in run.stdout
    # the end of the output, where the contract's lines are, is always kept
    binary = program(tmp_path, "head -c 30000000 /dev/zero | tr '\\0' x\necho\n"
                     "echo '{\"sum\": 3, \"result\": \"PASS\"}'\necho PASS\n")
    run = run_binary(binary, tmp_path, 300.0)  # a bound against a hang only
    assert run.passed and run.json == {"sum": 3, "result": "PASS"}


def test_a_shortened_output_still_compares_by_all_of_it():
    """Two long outputs that differ only in the part left out do not read the same."""
    texts = []
    for middle in (b"a", b"b"):
        capture = _Capture(100)
        for chunk in (b"h" * 70, middle, b"t" * 70):
            capture.add(chunk)
        texts.append(capture.text())
        assert texts[-1].startswith("h" * 50) and texts[-1].endswith("t" * 50)
        assert hashlib.sha256(b"h" * 70 + middle + b"t" * 70).hexdigest() in texts[-1]
    assert texts[0] != texts[1]
    short = _Capture(100)
    short.add(b"all of it\n")
    assert short.text() == "all of it\n"


def test_run_process_stops_a_python_child_in_its_own_session(tmp_path: Path):
    script = ("import os, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    open('child.pid', 'w').write(str(os.getpid()))\n"
              "    time.sleep(3600)\n"
              "else:\n"
              "    while not os.path.exists('child.pid') or not open('child.pid').read():\n"
              "        time.sleep(0.01)\n"
              "    print('parent', flush=True)\n"
              "    time.sleep(3600)\n")
    outcome, _, pid = past_start(
        tmp_path, lambda limit: run_process([sys.executable, "-c", script], tmp_path, limit),
        started=lambda outcome: outcome.stdout == "parent\n")
    assert outcome.timed_out and outcome.rc is None
    assert gone(pid), "the child in its own session survived the run"


def test_a_program_that_cannot_start_is_reported(tmp_path: Path):
    run = run_binary(tmp_path / "missing", tmp_path, 1.0)
    assert run.rc is None and not run.timed_out and "cannot run missing" in run.stderr_tail


def test_a_json_line_without_a_result_key_is_reported_as_such():
    ok = Build("nvcc", "nvcc ...", True, 1.0)
    contract = Run.from_output(0, 0.01, False, '{"sum": 3, "result": "PASS"}\nPASS\n')
    keyless = Run.from_output(0, 0.01, False, '{"sum": 3}\nPASS\n')
    status, problems = verdict(Original(ok, [contract]), VariantOutcome([], ok, [keyless]),
                               ValidateOptions(source=Path(".")))
    assert status == "mismatch"
    assert problems == ['port run 1 did not pass (the program\'s JSON line has no "result" key: '
                        'the contract asks for {..., "result": "PASS"} on that line; exit code '
                        '0, status PASS)']
    wrong = Run.from_output(0, 0.01, False, json.dumps({"sum": 3, "result": "maybe"}) + "\nPASS\n")
    assert 'its JSON line says "result": "maybe"' in wrong.why_not_passed()
    no_pass_line = Run.from_output(0, 0.01, False, '{"sum": 3, "result": "PASS"}\n')
    assert "its last stdout line is not PASS" in no_pass_line.why_not_passed()
    assert contract.why_not_passed() is None and contract.passed


def test_compiles_and_probes_leave_no_process_behind_either(tmp_path: Path, monkeypatch):
    """A compiler is run like a program: a child it leaves holding its output does not keep
    validate waiting, and the build's time limit holds."""
    compiler = program(tmp_path, SETSID_CHILD + WAIT_FOR_CHILD +
                       "echo 'nvcc: release 12.4'\necho 'error: no input' >&2\nexit 1\n")
    fake = Toolchain("fake", str(compiler), "v", "a stand-in", (), "cu")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sides, "BUILD_TIMEOUT", OUTER_BOUND)
    monkeypatch.setattr(compilers, "PROBE_TIMEOUT", OUTER_BOUND)
    build = returns(2 * OUTER_BOUND, lambda: sides.compile_binary(
        fake, tmp_path / "app.cu", tmp_path / "bin" / "app", (tmp_path,)))
    assert not build.ok and "error: no input" in build.output_tail  # not the time limit's end
    assert gone(written_pid(tmp_path))
    (tmp_path / "child.pid").unlink()
    said = returns(2 * OUTER_BOUND, lambda: compilers.compiler_version(str(compiler)))
    assert said == "nvcc: release 12.4"  # not "unknown (no answer within 60 s)"
    assert gone(written_pid(tmp_path))
    stuck = Toolchain("fake", str(program(tmp_path, SETSID_CHILD + "exec sleep 3600\n")), "v",
                      "a stand-in", (), "cu")

    def compile_within(limit: int) -> Build:
        monkeypatch.setattr(sides, "BUILD_TIMEOUT", limit)
        return sides.compile_binary(stuck, tmp_path / "app.cu", tmp_path / "bin" / "app",
                                           (tmp_path,))
    build, limit, pid = past_start(tmp_path, compile_within)
    assert not build.ok and f"took longer than {limit} s" in build.output_tail
    assert gone(pid)


def test_another_child_of_this_process_is_no_part_of_a_run(tmp_path: Path):
    """Parallel builds: a process this one starts for another run holds a copy of every pipe
    open here between its fork and its exec; it must not be killed as part of this run. A
    process that left the run (reparented away from this one) holding the pipe still is."""
    read, write = os.pipe()
    pipe = f"pipe:[{os.fstat(read).st_ino}]"
    sibling = subprocess.Popen(["sleep", "3600"], pass_fds=(write,))
    escaped = subprocess.Popen(["sh", "-c", 'setsid sleep 3600 & echo $! > "$0"',
                                str(tmp_path / "child.pid")], pass_fds=(write,))
    try:
        escaped.wait(OUTER_BOUND)  # it writes the pid before it ends
        orphan = written_pid(tmp_path)
        # under load the orphan may not have reached setsid() yet: until it has, it is in this
        # process's session, like a sibling between fork and exec
        deadline = time.monotonic() + OUTER_BOUND
        while os.getsid(orphan) == os.getsid(0) and time.monotonic() < deadline:
            time.sleep(0.01)
        found = run_processes(os.getpid() + 10 ** 7, "no-token", {pipe})  # a run long gone
        assert sibling.pid not in found
        assert orphan in found
    finally:
        sibling.kill()
        sibling.wait()
        os.kill(written_pid(tmp_path), 9)
        os.close(read)
        os.close(write)


def daemon_script(folder: Path, then: str) -> str:
    """A program whose grandchild double-forks, calls setsid(), writes its pid, closes every
    descriptor and becomes ``sleep 3600`` with an empty environment: nothing but its ancestry
    (which it left) ties it to the run. The program waits for the pid, says ``started``, then
    runs ``then``."""
    return (f"import os, sys, time\n"
            f"pid_file = {str(folder / 'child.pid')!r}\n"
            f"if os.fork() == 0:\n"
            f"    if os.fork() == 0:\n"
            f"        os.setsid()\n"
            f"        if os.fork() == 0:\n"
            f"            with open(pid_file + '.new', 'w') as out:\n"
            f"                out.write(str(os.getpid()))\n"
            f"            os.rename(pid_file + '.new', pid_file)\n"
            f"            os.closerange(0, 65536)\n"
            f"            os.execve({shutil.which('sleep')!r}, ['sleep', '3600'], {{}})\n"
            f"        os._exit(0)\n"
            f"    os._exit(0)\n"
            f"os.wait()\n"
            f"while not os.path.exists(pid_file):\n"
            f"    time.sleep(0.01)\n"
            f"print('started', flush=True)\n" + then)


def test_a_daemonized_grandchild_is_gone_after_the_time_limit(tmp_path: Path):
    """Double fork, setsid(), an empty environment, no descriptors: found all the same."""
    script = daemon_script(tmp_path, "time.sleep(3600)\n")
    outcome, _, pid = past_start(
        tmp_path, lambda limit: run_process([sys.executable, "-c", script], tmp_path, limit),
        started=lambda outcome: outcome.stdout == "started\n")
    assert outcome.timed_out and outcome.rc is None
    assert gone(pid), "the daemonized grandchild survived the time limit"


def test_a_daemonized_grandchild_of_a_program_that_ended_is_killed(tmp_path: Path):
    script = daemon_script(tmp_path, "print('PASS')\n")
    binary = program(tmp_path, f"exec {shlex.quote(sys.executable)} -c {shlex.quote(script)}\n")
    run = returns(2 * OUTER_BOUND, lambda: run_binary(binary, tmp_path, OUTER_BOUND))
    assert not run.timed_out and run.rc == 0 and run.passed
    assert gone(written_pid(tmp_path)), "the daemonized grandchild survived the run"
    assert "left running" in run.stderr_tail


def test_a_run_leaves_a_daemon_of_a_run_still_going_alone(tmp_path: Path):
    """Two runs at once (a parallel build): the first to end kills nothing of the other's, even
    a daemon that kept nothing of its run; the last to end takes every daemon that started while
    both were going."""
    going, ending = tmp_path / "going", tmp_path / "ending"
    going.mkdir()
    ending.mkdir()
    release = tmp_path / "release"
    script = daemon_script(going, f"while not os.path.exists({str(release)!r}):\n"
                                  f"    time.sleep(0.01)\n")
    still_going = threading.Thread(target=lambda: run_process(
        [sys.executable, "-c", script], going, OUTER_BOUND), daemon=True)
    still_going.start()
    try:
        deadline = time.monotonic() + OUTER_BOUND
        while written_pid(going) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        their_daemon = written_pid(going)
        assert their_daemon is not None, "the other run's daemon never started"
        done = returns(2 * OUTER_BOUND, lambda: run_process(
            [sys.executable, "-c", daemon_script(ending, "")], ending, OUTER_BOUND))
        assert not done.timed_out and done.rc == 0
        assert alive(their_daemon), "a run killed a daemon of another run still going"
    finally:
        release.touch()
    still_going.join(2 * OUTER_BOUND)
    assert not still_going.is_alive()
    assert gone(their_daemon), "the run still going did not kill its daemon when it ended"
    assert gone(written_pid(ending)), "a daemon of the run that ended first survived both"
