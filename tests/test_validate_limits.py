"""validate's limits on the programs it runs: the time limit holds against children that leave
the process group (setsid), no process of a run survives it, output is read within bounds, and a
JSON line without a "result" key is reported as what it is. Shell scripts stand in for the built
binaries (run_binary runs whatever file it is given)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import require, require_path
from migrator.validate.compare import Run
from migrator.validate.process import _Capture, run_process
from migrator.validate.run import (Build, Original, ValidateOptions, VariantOutcome, run_binary,
                                  verdict)


@pytest.fixture(autouse=True)
def _posix_processes_and_proc():
    require(os.name == "posix", "POSIX processes")
    require_path(Path("/proc/self/stat"), "Linux's /proc")

# a child that leaves the process group with setsid(), writes its pid, and holds stdout open
SETSID_CHILD = 'setsid sh -c \'echo $$ > "$1"; exec sleep 20\' child "$PWD/child.pid" &\n'


def program(folder: Path, body: str) -> Path:
    path = folder / "program.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def child_pid(folder: Path) -> int:
    for _ in range(200):
        text = (folder / "child.pid").read_text().strip() if (folder / "child.pid").exists() else ""
        if text:
            return int(text)
        time.sleep(0.01)
    raise AssertionError("the child never wrote its pid")


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int) -> bool:
    deadline = time.monotonic() + 2
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_the_time_limit_holds_against_a_setsid_child_holding_stdout(tmp_path: Path):
    binary = program(tmp_path, SETSID_CHILD + "echo started\nexec sleep 20\n")
    start = time.monotonic()
    run = run_binary(binary, tmp_path, 1.0)
    took = time.monotonic() - start
    pid = child_pid(tmp_path)
    assert took < 1.0 + 2.5, f"validate waited {took:.1f} s for a 1 s limit"
    assert run.timed_out and run.rc is None
    assert "killed after the time limit of 1 s" in run.stderr_tail
    assert gone_soon(pid), "the setsid child survived the run"


def test_a_setsid_child_left_behind_by_a_program_that_ended_is_killed(tmp_path: Path):
    binary = program(tmp_path, SETSID_CHILD + 'while [ ! -s child.pid ]; do sleep 0.01; done\n'
                     'echo \'{"value": 1, "result": "PASS"}\'\necho PASS\n')
    start = time.monotonic()
    run = run_binary(binary, tmp_path, 10.0)
    assert time.monotonic() - start < 5, "validate waited for the child holding stdout"
    assert not run.timed_out and run.rc == 0 and run.passed
    assert run.json == {"value": 1, "result": "PASS"}
    assert gone_soon(child_pid(tmp_path)), "the setsid child survived the run"
    assert "left running" in run.stderr_tail


def test_a_child_that_clears_its_environment_is_found_by_the_pipe_it_holds(tmp_path: Path):
    binary = program(tmp_path, "env -i setsid sh -c 'echo $$ > \"$0\"; exec sleep 20' "
                     "\"$PWD/child.pid\" &\nexec sleep 20\n")
    start = time.monotonic()
    run = run_binary(binary, tmp_path, 1.0)
    assert time.monotonic() - start < 3.5 and run.timed_out
    assert gone_soon(child_pid(tmp_path))


def test_output_is_read_within_bounds(tmp_path: Path):
    binary = program(tmp_path, "head -c 60000000 /dev/zero | tr '\\0' x\necho\necho last line\n")
    run = run_binary(binary, tmp_path, 30.0)
    assert run.rc == 0 and run.json is None
    assert len(run.stdout) < 5 * 1024 * 1024  # kept: the head and the tail, not 60 MB
    assert run.stdout.startswith("xxxx") and run.stdout.endswith("x\nlast line\n")
    assert "bytes of output left out" in run.stdout
    # the end of the output, where the contract's lines are, is always kept
    binary = program(tmp_path, "head -c 30000000 /dev/zero | tr '\\0' x\necho\n"
                     "echo '{\"sum\": 3, \"result\": \"PASS\"}'\necho PASS\n")
    run = run_binary(binary, tmp_path, 30.0)
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


def test_run_process_returns_promptly_with_a_python_child_in_its_own_session(tmp_path: Path):
    script = ("import os, sys, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    open('child.pid', 'w').write(str(os.getpid()))\n"
              "    time.sleep(20)\n"
              "else:\n"
              "    print('parent', flush=True)\n"
              "    time.sleep(20)\n")
    start = time.monotonic()
    outcome = run_process([sys.executable, "-c", script], tmp_path, 1.0)
    assert time.monotonic() - start < 3.5 and outcome.timed_out
    assert outcome.stdout == "parent\n"
    assert gone_soon(child_pid(tmp_path))


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
    from migrator.validate import run as harness_run
    from migrator.validate.toolchain import Toolchain, compiler_version

    compiler = program(tmp_path, SETSID_CHILD + "while [ ! -s child.pid ]; do sleep 0.01; done\n"
                       "echo 'nvcc: release 12.4'\necho 'error: no input' >&2\nexit 1\n")
    fake = Toolchain("fake", str(compiler), "v", "a stand-in", (), "cu")
    monkeypatch.chdir(tmp_path)
    start = time.monotonic()
    build = harness_run.compile_binary(fake, tmp_path / "app.cu", tmp_path / "bin" / "app",
                                       (tmp_path,))
    assert time.monotonic() - start < 5 and not build.ok
    assert "error: no input" in build.output_tail
    assert gone_soon(child_pid(tmp_path))
    (tmp_path / "child.pid").unlink()
    start = time.monotonic()
    assert compiler_version(str(compiler)) == "nvcc: release 12.4"
    assert time.monotonic() - start < 5 and gone_soon(child_pid(tmp_path))
    (tmp_path / "child.pid").unlink()
    monkeypatch.setattr(harness_run, "BUILD_TIMEOUT", 1)
    stuck = program(tmp_path, SETSID_CHILD + "exec sleep 20\n")
    start = time.monotonic()
    build = harness_run.compile_binary(Toolchain("fake", str(stuck), "v", "a stand-in", (), "cu"),
                                       tmp_path / "app.cu", tmp_path / "bin" / "app", (tmp_path,))
    assert time.monotonic() - start < 3.5
    assert not build.ok and "took longer than 1 s" in build.output_tail
    assert gone_soon(child_pid(tmp_path))


def test_another_child_of_this_process_is_no_part_of_a_run(tmp_path: Path):
    """Parallel builds: a process this one starts for another run holds a copy of every pipe
    open here between its fork and its exec; it must not be killed as part of this run. A
    process that left the run (reparented away from this one) holding the pipe still is."""
    from migrator.validate.process import run_processes

    read, write = os.pipe()
    pipe = f"pipe:[{os.fstat(read).st_ino}]"
    sibling = subprocess.Popen(["sleep", "20"], pass_fds=(write,))
    escaped = subprocess.Popen(["sh", "-c", 'setsid sleep 20 & echo $! > "$0"',
                                str(tmp_path / "child.pid")], pass_fds=(write,))
    try:
        escaped.wait(5)
        orphan = child_pid(tmp_path)
        found = run_processes(os.getpid() + 10 ** 7, "no-token", {pipe})  # a run long gone
        assert sibling.pid not in found
        assert orphan in found
    finally:
        sibling.kill()
        sibling.wait()
        os.kill(child_pid(tmp_path), 9)
        os.close(read)
        os.close(write)
