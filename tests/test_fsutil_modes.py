"""The modes of the files rocmigrate writes: a new file gets 0o666 less the user's umask (as
any program's ``open(..., "w")``), a replaced file keeps its mode, and ``mode_from`` copies a
source's mode (convert's outputs, lint --fix)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator import fsutil
from migrator.cli import _register, app
from migrator.fsutil import atomic_write, write_inside

from test_report import make_tree

_register()

REPORT_FILES = ("report.html", "report.json", "report.md")


@pytest.fixture
def umask():
    """Set the process's umask for the test; the old one comes back after."""
    old = os.umask(0o022)
    os.umask(old)

    def use(mask: int) -> None:
        os.umask(mask)

    yield use
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_umask_is_read_without_changing_it(umask):
    umask(0o027)
    assert fsutil.current_umask() == 0o027 and fsutil.new_file_mode() == 0o640
    assert fsutil.current_umask() == 0o027  # reading it changed nothing
    umask(0o002)
    assert fsutil.new_file_mode() == 0o664


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_get_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    atomic_write(tmp_path / "a" / "new.txt", b"x")
    assert write_inside(tmp_path, "b/new.txt", b"x")
    assert mode(tmp_path / "a" / "new.txt") == expected
    assert mode(tmp_path / "b" / "new.txt") == expected


def test_a_replaced_file_keeps_its_mode_and_mode_from_is_copied(tmp_path, umask):
    umask(0o022)
    kept = tmp_path / "kept.txt"
    kept.write_bytes(b"old")
    kept.chmod(0o640)
    atomic_write(kept, b"new")
    assert kept.read_bytes() == b"new" and mode(kept) == 0o640
    kept.chmod(0o600)
    assert write_inside(tmp_path, "kept.txt", b"newer")
    assert mode(kept) == 0o600
    kept.chmod(0o4755)  # the permissions are kept, not set-user-ID: the new file is ours
    atomic_write(kept, b"ours")
    assert mode(kept) == 0o755
    source = tmp_path / "tool.sh"
    source.write_bytes(b"#!/bin/sh\n")
    source.chmod(0o750)
    atomic_write(tmp_path / "out.sh", b"#!/bin/sh\n", mode_from=source)
    atomic_write(kept, b"again", mode_from=source)  # mode_from wins over the replaced file's
    assert mode(tmp_path / "out.sh") == 0o750 and mode(kept) == 0o750
    target = tmp_path / "target.txt"
    target.write_bytes(b"t")
    target.chmod(0o600)
    (tmp_path / "link.txt").symlink_to(target)
    assert write_inside(tmp_path, "link.txt", b"replaced")  # the link is replaced, not followed
    assert not (tmp_path / "link.txt").is_symlink() and mode(tmp_path / "link.txt") == 0o644
    assert mode(target) == 0o600 and target.read_bytes() == b"t"


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_report_files_get_the_umask_and_keep_a_mode_given_them(tmp_path, umask, mask, expected):
    tree = make_tree(tmp_path / "src")
    out = tmp_path / "out"
    umask(mask)
    done = CliRunner().invoke(app, ["report", str(tree), "-o", str(out), "--rocm", "6.4"])
    assert done.exit_code == 0, done.output
    assert {name: mode(out / name) for name in REPORT_FILES} == dict.fromkeys(REPORT_FILES,
                                                                              expected)
    (out / "report.html").chmod(0o664)  # a team's choice: kept when the report is written again
    again = CliRunner().invoke(app, ["report", str(tree), "-o", str(out), "--rocm", "6.4"])
    assert again.exit_code == 0, again.output
    assert mode(out / "report.html") == 0o664 and mode(out / "report.md") == expected
