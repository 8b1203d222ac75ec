"""migrator.cluster without a cluster: options and the configuration's slurm table, what Slurm's
commands print (parsed), the sbatch line, the work folder's records (untrusted: a bad one is no
result) and a job run on its own."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from migrator.cluster import ClusterError, ClusterOptions, Job, merged, sbatch_arguments
from migrator.cluster import job as job_main, slurm, work as folder
from migrator.cluster.records import RecordError, from_record, record_of
from migrator.toolchain.sides import Build, Toolchain
from migrator.validate.compare import Run


def test_the_command_line_goes_over_the_configuration_over_the_defaults(tmp_path: Path):
    table = {"partition": "mi250x", "account": "proj1", "options": ["--constraint=x", "-N 1"],
             "shared": "scratch", "retries": 3, "cpus-per-job": 4, "poll-seconds": 0.5}
    options = merged({"partition": "debug", "sbatch_options": ("--time=30",), "qos": None},
                     None, {"executor": "slurm", "slurm": table}, tmp_path / "pyproject.toml",
                     tmp_path)
    assert options.executor == "slurm" and options.slurm
    assert (options.partition, options.account, options.qos) == ("debug", "proj1", None)
    assert options.sbatch_options == ("--constraint=x", "-N", "1", "--time=30")
    assert options.shared == tmp_path / "scratch" and options.retries == 3
    assert (options.cpus, options.poll, options.gres) == (4, 0.5, "gpu:1")
    assert merged({}, "local", {"executor": "slurm"}, None, tmp_path).executor == "local"
    assert merged({}, None, {}, None, tmp_path) == ClusterOptions()


@pytest.mark.parametrize("table, message", [
    ({"partiton": "x"}, "slurm.partiton is not a key"),
    ({"retries": "2"}, "slurm.retries must be int"),
    ({"retries": True}, "slurm.retries must be int"),
    ({"retries": -1}, "retries must be 0 or more"),
    ({"options": [1]}, "slurm.options must be a list of strings"),
    ({"partition": "a b"}, "partition 'a b' must be one word"),
    ({"time-limit": 0}, "the time limit is in minutes"),
    ({"poll-seconds": 0}, "must be above 0"),
])
def test_a_bad_slurm_table_is_an_error_naming_the_file(tmp_path: Path, table, message):
    with pytest.raises(ClusterError, match=message) as raised:
        merged({}, None, {"slurm": table}, tmp_path / ".rocmigrate.toml", tmp_path)
    assert ".rocmigrate.toml" in str(raised.value)


def test_an_unknown_executor_is_an_error(tmp_path: Path):
    with pytest.raises(ClusterError, match="unknown executor 'pbs'"):
        merged({}, "pbs", {}, None, tmp_path)


def test_the_sbatch_line_puts_the_users_options_last():
    options = ClusterOptions("slurm", partition="gpu", account="a1", qos="normal",
                             sbatch_options=("--time=5", "--constraint=mi250"), cpus=2,
                             max_running=4)
    words = sbatch_arguments(options, "rocmigrate-validate", 3, 125.0, True, "/w/logs/b-%a.log")
    assert words == ["--job-name=rocmigrate-validate", "--array=0-2%4", "--time=3",
                     "--cpus-per-task=2", "--ntasks=1", "--output=/w/logs/b-%a.log",
                     "--export=ALL", "--partition=gpu", "--account=a1", "--qos=normal",
                     "--gres=gpu:1", "--time=5", "--constraint=mi250"]
    plain = sbatch_arguments(ClusterOptions("slurm", time_limit=90, gres="none"), "j", 1,
                             10.0, True, "l")
    assert "--time=90" in plain and not any(w.startswith("--gres") for w in plain)


def test_squeue_and_scontrol_output_is_read(monkeypatch):
    printed = {
        "squeue": "12_0|RUNNING|None|node3\n12_[2-4%2]|PENDING|JobArrayTaskLimit|\n"
                  "13_1|PENDING|Resources|\nbad line\n",
        "scontrol": "JobId=14 ArrayJobId=12 ArrayTaskId=1 JobState=FAILED Reason=NonZeroExitCode "
                    "ExitCode=3:0 BatchHost=node7 NodeList=node7\n"
                    "JobId=12 ArrayJobId=12 ArrayTaskId=0 JobState=TIMEOUT Reason=TimeLimit "
                    "ExitCode=0:15 NodeList=node3\n"
                    "JobId=99 ArrayJobId=98 ArrayTaskId=0 JobState=COMPLETED\n",
    }
    monkeypatch.setattr(slurm, "_slurm", lambda command: printed[command[0]])
    queued = slurm.queued(["12", "13"])
    assert queued[("12", 0)] == slurm.TaskState("RUNNING", "", "", "node3")
    assert {key for key in queued} == {("12", 0), ("12", 2), ("12", 3), ("12", 4), ("13", 1)}
    assert queued[("12", 3)].reason == "JobArrayTaskLimit"
    ended = slurm.ended("12")
    assert sorted(ended) == [0, 1]
    assert ended[1].describe() == "FAILED (NonZeroExitCode, exit code 3:0, on node7)"
    assert ended[0].describe() == "TIMEOUT (TimeLimit, exit code 0:15, on node3)"
    assert slurm.TaskState("CANCELLED").describe() == "CANCELLED"


def test_a_job_id_is_what_sbatch_printed(monkeypatch):
    monkeypatch.setattr(slurm, "_slurm", lambda command: "4242;cluster\n")
    assert slurm.submit(["--array=0-1"], ["job.sh", "b"]) == "4242"
    monkeypatch.setattr(slurm, "_slurm", lambda command: "sbatch: error\n")
    with pytest.raises(slurm.SlurmError, match="not a job id"):
        slurm.submit([], ["job.sh"])


def test_without_slurms_commands_the_executor_says_so(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "sbatch, squeue, scontrol, scancel not found" in slurm.available()
    from migrator.cluster import run_jobs

    with pytest.raises(slurm.SlurmError, match="not found"):
        run_jobs([Job("x", "validate.program", {})], ClusterOptions("slurm"), tmp_path, "v",
                 lambda line: None)


def test_records_round_trip_and_a_bad_one_is_refused():
    build = Build("nvcc", "nvcc -O3 x.cu", True, 1.5, "ok")
    assert from_record(Build, json.loads(json.dumps(record_of(build)))) == build
    run = Run(0, 0.1, False, "PASS", {"b": 1, "a": 2}, None, "", True)
    assert from_record(Run, json.loads(json.dumps(record_of(run)))) == run
    toolchain = Toolchain("hip-cpu", "g++", "12", "why", ("-O1",), "c++", (("A", "1"),))
    assert from_record(Toolchain, json.loads(json.dumps(record_of(toolchain)))) == toolchain
    for bad, message in [({**record_of(build), "extra": 1}, "unknown keys"),
                         ({"toolchain": "nvcc"}, "lacks 'command'"),
                         ({**record_of(build), "ok": "yes"}, "expected bool"),
                         ({**record_of(build), "seconds": None}, "expected a number"),
                         ([], "not an object")]:
        with pytest.raises(RecordError, match=message):
            from_record(Build, bad)


@dataclass
class _Outer:
    name: str
    builds: list[Build] = field(default_factory=list)
    pair: tuple[int, int] | None = None


def test_records_hold_dataclasses_lists_tuples_and_unions():
    value = _Outer("x", [Build("nvcc", "c", False, 0.0)], (1, 2))
    assert from_record(_Outer, json.loads(json.dumps(record_of(value)))) == value
    assert from_record(_Outer, {"name": "y"}) == _Outer("y")
    with pytest.raises(RecordError):
        from_record(_Outer, {"name": "y", "pair": [1]})


def test_the_work_folder_reads_back_only_what_was_written_for_an_item(tmp_path: Path):
    digest = folder.digest_of("validate.program", {"a": 1})
    assert digest == folder.digest_of("validate.program", {"a": 1}) != \
        folder.digest_of("validate.program", {"a": 2})
    folder.write_item(tmp_path, digest, "validate.program", {"a": 1}, "prog")
    assert folder.read_item(tmp_path, digest)["key"] == "prog"
    (tmp_path / "items" / f"{digest}.json").write_text(json.dumps(
        {"kind": "validate.program", "arguments": {"a": 3}, "key": "prog"}))
    assert folder.read_item(tmp_path, digest) is None  # altered: not this item any more
    assert folder.read_result(tmp_path, digest) is None
    folder.write_result(tmp_path, digest, {"result": {"x": 1}, "node": "n"})
    assert folder.read_result(tmp_path, digest)["result"] == {"x": 1}
    for text in ("not json", "[]", json.dumps({"digest": "other", "result": {}}),
                 json.dumps({"digest": digest, "result": 3})):
        (tmp_path / "results" / f"{digest}.json").write_text(text)
        assert folder.read_result(tmp_path, digest) is None
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"digest": digest, "result": {}}))
    (tmp_path / "results" / f"{digest}.json").unlink()
    (tmp_path / "results" / f"{digest}.json").symlink_to(target)
    assert folder.read_result(tmp_path, digest) is None  # a link is never followed


def test_a_task_with_bad_arguments_or_an_unknown_item_writes_nothing(tmp_path: Path, capsys):
    assert job_main.main([str(tmp_path), "b"]) == 2
    assert job_main.main([str(tmp_path), "../b", "0"]) == 2
    folder.write_json(tmp_path, "batches/b.json", ["abc"])
    assert job_main.main([str(tmp_path), "b", "0"]) == 2
    assert job_main.main([str(tmp_path), "b", "5"]) == 2
    digest = folder.digest_of("os.system", {})
    folder.write_item(tmp_path, digest, "os.system", {}, "x")
    folder.write_json(tmp_path, "batches/c.json", [digest])
    assert job_main.main([str(tmp_path), "c", "0"]) == 2  # not a kind of the fixed table
    assert not (tmp_path / "results").exists()
    assert "unknown kind" in capsys.readouterr().err


def test_an_error_of_the_item_itself_is_recorded_not_retried(tmp_path: Path):
    arguments = {"program": {"name": "p"}}  # a validate job missing everything else
    digest = folder.digest_of("validate.program", arguments)
    folder.write_item(tmp_path, digest, "validate.program", arguments, "p")
    folder.write_json(tmp_path, "batches/b.json", [digest])
    assert job_main.main([str(tmp_path), "b", "0"]) == 1
    record = folder.read_result(tmp_path, digest)
    assert "lacks 'rel'" in record["error"] and "Traceback" in record["traceback"]


def test_the_work_folder_and_its_folders_are_never_reached_through_a_symlink(tmp_path: Path):
    """A symlink planted at the work folder or at one of its folders (logs, a build folder
    the command removes when it ends) is refused, and nothing is made where it points."""
    from migrator.build.run import BuildFailure, BuildOptions, _build_folder
    from migrator.fsutil import UnsafePathError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    assert folder.prepare(out / "slurm", "logs", "build") == (out / "slurm").resolve()
    assert (out / "slurm" / "logs").is_dir() and not (out / "slurm" / "logs").is_symlink()
    (out / "slurm" / "logs").rmdir()
    (out / "slurm" / "logs").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError, match="logs is a symlink"):
        folder.prepare(out / "slurm", "logs")
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere)
    with pytest.raises(UnsafePathError):
        folder.prepare(linked, "build")
    (out / "slurm" / "build").rmdir()
    (out / "slurm" / "build").symlink_to(elsewhere)
    options = BuildOptions(out=tmp_path / "tree", cluster=ClusterOptions("slurm"),
                           work=out / "slurm")
    with pytest.raises(BuildFailure, match="cannot use the work folder .*build is a symlink"):
        _build_folder(options, tmp_path / "tree")
    assert list(elsewhere.iterdir()) == []
