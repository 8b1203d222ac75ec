"""`rocmigrate build --executor slurm` on a real (one-node) Slurm cluster: one job per build
root and per group of files; the report is the one a local build writes (units, errors mapped
to the tree, logs, missing libraries), and a re-run resumes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, require_tool
from migrator.cli import _register, app
from slurm_cluster import slurm  # noqa: F401 (a fixture)

_register()
FIXTURES = ROOT / "fixtures" / "build"


def build(report: Path, *args: str) -> tuple[int, dict, str]:
    done = CliRunner().invoke(app, ["build", str(FIXTURES / "roots"), "--report", str(report),
                                    "-j", "2", *args])
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, json.loads((report / "build.json").read_text()), done.output


def comparable(document: dict, report: Path) -> dict:
    """The document without what differs from run to run: times, the build folder (a temporary
    one here, the work folder's with Slurm), make's -j (a job runs as many compiles as it has
    CPUs) and the executor; each log's text in place of its name."""
    document = json.loads(json.dumps(document))
    for unit in document["units"]:
        unit.pop("seconds")
    for key in ("build_dir", "cluster"):
        document.pop(key)
    document["settings"].pop("executor")
    document["logs"] = {name: (report / name).read_text() for name in document["logs"]}
    text = re.sub(r"/tmp/rocmigrate-build-\w+|" + re.escape(str(report / "slurm" / "build")),
                  "BUILD", json.dumps(document))
    return json.loads(re.sub(r"-j \d+", "-j N", text))


@pytest.mark.slow
@pytest.mark.parametrize("cmake_args", [("--cmake-arg", "-DMODEL=hip"), ()],
                         ids=["builds", "a-root-fails"])
def test_build_roots_on_slurm_as_here(tmp_path: Path, slurm, cmake_args):
    for tool in ("hipcc", "make", "cmake"):
        require_tool(tool)
    code, local, output = build(tmp_path / "local", *cmake_args)
    slurm_code, on_slurm, slurm_output = build(tmp_path / "slurm", *cmake_args, "--executor",
                                               "slurm", "--partition", slurm)
    assert slurm_code == code == (0 if cmake_args else 1), slurm_output
    assert re.search(r"submitted 3 build jobs as Slurm array job \d+", slurm_output)
    assert comparable(on_slurm, tmp_path / "slurm") == comparable(local, tmp_path / "local")
    jobs = on_slurm["cluster"]["jobs"]
    assert [job["key"] for job in jobs] == ["root cmake_app", "root make_app",
                                           "files loose/extra.hip"]
    assert all(job["ok"] for job in jobs)
    markdown = (tmp_path / "slurm" / "build.md").read_text()
    assert "## Slurm jobs" in markdown and "3 of 3 jobs have a result" in markdown
    if cmake_args:  # the same report folder again: the records are reused
        _, again, output = build(tmp_path / "slurm", *cmake_args, "--executor", "slurm")
        assert "3 of 3 jobs have results from an earlier run" in output
        assert "as Slurm array job" not in output
        assert comparable(again, tmp_path / "slurm") == comparable(local, tmp_path / "local")
