"""The workspace every command shares: settings resolved once (flags > configuration file >
defaults, errors naming where a value came from) and one walk of the tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from migrator.workspace import Flags, WorkspaceError, open_workspace
from migrator.workspace.discovery import walk

USER_RULE = '''
from migrator.diagnostics import Diagnostic
from migrator.rule import Rule


class NoPrintf(Rule):
    """No printf in device code.

    ## What it does
    Reports `printf`.

    ## Why is this bad on AMD
    Device printf is slow on AMD.

    ## Example
    ```cpp
    printf("x");
    ```

    ## Use instead
    ```cpp
    // nothing
    ```

    ## Fix safety
    No fix.
    """

    code = "TMX001"
    name = "no-printf"
    summary = "printf in device code"
    family = "team"
    fix = "never"

    def check(self, ctx):
        at = ctx.data.find(b"printf")
        if at != -1:
            yield Diagnostic("TMX001", "printf", at, at + 6)
'''


def _config(folder: Path, text: str, name: str = ".rocmigrate.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_defaults_without_a_configuration_file(tmp_path: Path):
    workspace = open_workspace([tmp_path], Flags())
    settings = workspace.settings
    assert workspace.config_path is None
    assert (settings.rocm, settings.launch_syntax, settings.optimize) == ((6, 4, 0), "chevron", True)
    assert (settings.select, settings.ignore, settings.exclude, settings.rules_dir) == ((), (), (), None)
    assert (settings.roc, settings.dnn, settings.table_variants) == (False, "report", ())


def test_the_file_overrides_defaults_and_flags_override_the_file(tmp_path: Path):
    _config(tmp_path, 'rocm = "5.2"\nlaunch-syntax = "ggl"\nrename-ext = true\noptimize = false\n'
                      'select = ["API", "WAV"]\nignore = ["WAV004"]\nexclude = ["third_party"]\n'
                      'wavefront-size = 32\n[per-file-ignores]\n"tests/*" = ["wav001"]\n')
    settings = open_workspace([tmp_path / "src"], Flags()).settings
    assert settings.rocm == (5, 2, 0) and settings.launch_syntax == "ggl" and settings.rename_ext
    assert not settings.optimize and settings.wavefront_size == 32
    assert settings.select == ("API", "WAV") and settings.ignore == ("WAV004",)
    assert settings.exclude == ("third_party",)
    assert settings.per_file_ignores == (("tests/*", ("WAV001",)),)
    flagged = open_workspace([tmp_path], Flags(rocm="6.2", launch_syntax="chevron",
                                               select=("stm,HDR",), ignore=("API002",))).settings
    assert flagged.rocm == (6, 2, 0) and flagged.launch_syntax == "chevron"
    assert flagged.select == ("STM", "HDR")  # replaces the file's
    assert flagged.ignore == ("API002", "WAV004")  # adds to it


def test_library_choices_from_the_file_and_the_flags(tmp_path: Path):
    assert open_workspace([tmp_path], Flags(roc=True)).settings.table_variants == ("roc",)
    _config(tmp_path, 'roc = true\ndnn = "miopen"\n')
    settings = open_workspace([tmp_path], Flags()).settings
    assert (settings.roc, settings.dnn, settings.table_variants) == (True, "miopen",
                                                                     ("roc", "miopen"))
    flagged = open_workspace([tmp_path], Flags(dnn="report")).settings
    assert flagged.dnn == "report" and flagged.table_variants == ("roc",)
    # the choices are part of the cache key: another library, another output
    from migrator.settings import Settings

    keys = {s.fingerprint() for s in (Settings(), Settings(roc=True), Settings(dnn="miopen"))}
    assert len(keys) == 3


def test_hips_cpu_runtime_sets_its_target_and_launches(tmp_path: Path):
    """--runtime hip-cpu (or runtime = "hip-cpu"): ROCm 5.2's API and hipLaunchKernelGGL,
    whatever the target said; <<<>>> launches asked for with it are an error."""
    workspace = open_workspace([tmp_path], Flags(runtime="hip-cpu", rocm="6.4"))
    settings = workspace.settings
    assert (settings.runtime, settings.rocm, settings.launch_syntax) == ("hip-cpu", (5, 2, 0),
                                                                         "ggl")
    assert "HIP's CPU runtime" in workspace.rocm_reason and "--runtime hip-cpu" in \
        workspace.rocm_reason
    path = _config(tmp_path, 'runtime = "hip-cpu"\n')
    assert open_workspace([tmp_path], Flags()).settings.runtime == "hip-cpu"
    assert open_workspace([tmp_path], Flags(runtime="rocm")).settings.runtime == "rocm"
    with pytest.raises(WorkspaceError, match="cannot read <<<>>> launches"):
        open_workspace([tmp_path], Flags(launch_syntax="chevron"))
    path.write_text('runtime = "gpu"\n')
    with pytest.raises(WorkspaceError, match="runtime must be one of rocm, hip-cpu"):
        open_workspace([tmp_path], Flags())
    from migrator.settings import Settings

    assert Settings().fingerprint() != Settings().for_runtime("hip-cpu").fingerprint()


def test_pyproject_and_an_explicit_config(tmp_path: Path):
    _config(tmp_path, '[tool.rocmigrate]\nrocm = "6.0"\n', "pyproject.toml")
    assert open_workspace([tmp_path], Flags()).settings.rocm == (6, 0, 0)
    other = _config(tmp_path / "elsewhere", 'rocm = "5.7"\n')
    workspace = open_workspace([tmp_path], Flags(config=other))
    assert workspace.settings.rocm == (5, 7, 0) and workspace.root == other.parent


@pytest.mark.parametrize("text, said", [
    ('rocm = "99.9"\n', "rocm: ROCm 99.9 is newer"),
    ('select = ["NOPE"]\n', "select: unknown rule code or prefix 'NOPE'"),
    ('[per-file-ignores]\n"a" = ["XX9"]\n', "per-file-ignores['a']"),
    ('launch-syntax = "triple"\n', "launch-syntax must be one of chevron, ggl"),
    ('dnn = "cudnn"\n', "dnn must be one of report, miopen"),
    ('roc = "yes"\n', "roc must be a bool"),
    ('rules-dir = "missing"\n', "rules-dir 'missing' is not a folder"),
    ('colour = "red"\n', "unknown key 'colour'"),
    ("rocm = [\n", "not valid TOML"),
])
def test_errors_name_the_file(tmp_path: Path, text: str, said: str):
    path = _config(tmp_path, text)
    with pytest.raises(WorkspaceError) as raised:
        open_workspace([tmp_path], Flags())
    assert str(raised.value).startswith(str(path)) and said in str(raised.value)


@pytest.mark.parametrize("flags, said", [
    (Flags(rocm="0.0"), "--rocm: ROCm 0.0 is older"),
    (Flags(select=("NOPE",)), "--select: unknown rule code"),
    (Flags(ignore=("API,ZZZ",)), "--ignore: unknown rule code or prefix 'ZZZ'"),
])
def test_errors_name_the_flag(tmp_path: Path, flags: Flags, said: str):
    with pytest.raises(WorkspaceError, match=said):
        open_workspace([tmp_path], flags)


def test_a_rules_dir_adds_the_teams_codes(tmp_path: Path, monkeypatch):
    rules = tmp_path / "team_rules"
    rules.mkdir()
    (rules / "no_printf.py").write_text(USER_RULE)
    monkeypatch.setenv("ROCMIGRATE_TRUST_RULES_DIR", str(tmp_path))  # the user trusts this tree
    _config(tmp_path, 'rules-dir = "team_rules"\nselect = ["TMX001"]\n')
    settings = open_workspace([tmp_path], Flags()).settings
    assert settings.rules_dir == rules.resolve() and settings.select == ("TMX001",)
    flagged = open_workspace([tmp_path / "x"], Flags(rules_dir=rules, select=("TMX",),
                                                     config=tmp_path / ".rocmigrate.toml"))
    assert flagged.settings.select == ("TMX",)


def test_a_broken_rule_module_is_an_error_naming_it(tmp_path: Path):
    rules = tmp_path / "broken_rules"
    rules.mkdir()
    (rules / "oops.py").write_text("import no_such_module_here\n")
    with pytest.raises(WorkspaceError, match=r"oops\.py: cannot load the rule module: "
                                             r"ModuleNotFoundError"):
        open_workspace([tmp_path], Flags(rules_dir=rules))


def test_walk_classifies_every_entry(tmp_path: Path):
    root = tmp_path / "src"
    (root / "sub").mkdir(parents=True)
    (root / "main.cu").write_text("int main() {}\n")
    (root / "sub" / "util.cuh").write_text("\n")
    for quiet in (".git", ".venv", "__pycache__"):
        (root / quiet).mkdir()
        (root / quiet / "x.cu").write_text("\n")
    (root / "build" / "CMakeFiles").mkdir(parents=True)
    (root / "build" / "CMakeCache.txt").write_text("\n")
    (root / "old_out" / ".rocmigrate").mkdir(parents=True)
    (root / "old_out" / ".rocmigrate" / "cache.json").write_text("{}")
    (root / "old_out" / "x.hip").write_text("\n")
    (root / "third_party").mkdir()
    (root / "third_party" / "lib.cu").write_text("\n")
    os.symlink("main.cu", root / "alias.cu")
    os.symlink("sub", root / "subdir")
    os.symlink(".", root / "up")
    os.symlink("loop", root / "loop")
    os.symlink(tmp_path / "elsewhere.cu", root / "outside.cu")
    (tmp_path / "elsewhere.cu").write_text("\n")
    os.mkfifo(root / "pipe.cu")
    entries = {e.rel: e for e in walk(root, exclude=("third_party",), skip_outputs=True)}
    assert sorted(entries) == ["alias.cu", "build", "loop", "main.cu", "old_out", "outside.cu",
                               "pipe.cu", "sub/util.cuh", "subdir", "third_party/lib.cu", "up"]
    assert entries["main.cu"].kind == "file" and entries["main.cu"].size == 14
    assert (entries["alias.cu"].kind, entries["alias.cu"].target_rel) == ("link", "main.cu")
    assert (entries["subdir"].kind, entries["subdir"].target_is_dir) == ("link", True)
    assert "CMake build folder" in entries["build"].note
    assert "rocmigrate output folder" in entries["old_out"].note
    assert "loop" in entries["loop"].note and "loop" in entries["up"].note
    assert "outside the source tree" in entries["outside.cu"].note
    assert entries["pipe.cu"].note == "not a regular file"
    assert entries["third_party/lib.cu"].excluded and not entries["main.cu"].excluded
    # lint checks an output tree (the HIP port is what it lints); convert does not convert it again
    assert "old_out/x.hip" in {e.rel for e in walk(root)}


def test_walk_reports_an_unreadable_folder(tmp_path: Path, monkeypatch):
    root = tmp_path / "src"
    (root / "private").mkdir(parents=True)
    (root / "a.cu").write_text("\n")
    real_scandir = os.scandir

    def scandir(path=".", *args):  # what a folder without read permission does (root reads all)
        if Path(path).name == "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)
    entries = {e.rel: e for e in walk(root)}
    assert entries["private"].kind == "fail" and "Permission denied" in entries["private"].note
    assert entries["a.cu"].kind == "file"


# --- every command reads the same workspace ---------------------------------------------------

CUDA_FILE = b"""#include <cuda_runtime.h>
__global__ void k(float* p) { printf("x"); }
int main() { float* d; cudaMalloc(&d, 64); cudaStream_t s; cudaStreamCreate(&s);
  cudaDeviceSynchronize(); cudaFree(d); return 0; }
"""


def _cli(*args: str):
    from typer.testing import CliRunner

    from migrator.cli import _register, app

    _register()
    return CliRunner().invoke(app, list(args))


def _project(tmp_path: Path, config: str) -> Path:
    src = tmp_path / "project"
    (src / "third_party").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "main.cu").write_bytes(CUDA_FILE)
    (src / "third_party" / "vendored.cu").write_bytes(CUDA_FILE)
    (src / "tests" / "t.cu").write_bytes(CUDA_FILE)
    _config(src, config)
    return src


def _codes(report: dict) -> dict[str, set[str]]:
    return {f["path"]: {x["code"] for x in f.get("findings", [])} for f in report["files"]}


def test_convert_reads_the_configuration_file(tmp_path: Path):
    src = _project(tmp_path, 'rocm = "5.2"\nexclude = ["third_party"]\nignore = ["STM001"]\n'
                             '[per-file-ignores]\n"tests/*" = ["API001"]\n')
    out = tmp_path / "out"
    result = _cli("convert", str(src), "-o", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["settings"]["rocm"] == "5.2"
    codes = _codes(report)
    assert "API001" in codes["main.cu"] and "STM001" not in codes["main.cu"]
    assert "API001" not in codes["tests/t.cu"]  # the per-file ignore
    statuses = {f["path"]: f["status"] for f in report["files"]}
    assert statuses["third_party/vendored.cu"] == "copied"  # excluded: copied as it is
    assert (out / "third_party" / "vendored.cu").read_bytes() == CUDA_FILE
    assert b"hipMalloc" in (out / "main.cu").read_bytes()
    assert b"cudaStreamCreate" not in (out / "main.cu").read_bytes()  # API001 still renames it
    flagged = _cli("convert", str(src), "-o", str(tmp_path / "out2"), "--format", "json",
                   "--rocm", "6.0", "--select", "API", "--ignore", "HDR")
    report = json.loads(flagged.stdout)
    assert report["settings"]["rocm"] == "6.0"
    assert all(code.startswith("API") for codes in _codes(report).values() for code in codes)


def test_every_command_refuses_the_same_bad_configuration(tmp_path: Path):
    src = _project(tmp_path, 'rocm = "9.9"\n')
    for args in (("convert", str(src), "-o", str(tmp_path / "o")), ("lint", str(src)),
                 ("validate", str(src), "--build-only", "-o", str(tmp_path / "r"))):
        result = _cli(*args)
        assert result.exit_code == 2 and ".rocmigrate.toml: rocm: ROCm 9.9 is newer" in result.output


def test_a_teams_rule_runs_in_convert_and_lint(tmp_path: Path, monkeypatch):
    rules = tmp_path / "team_rules"
    rules.mkdir()
    (rules / "no_printf.py").write_text(USER_RULE)
    monkeypatch.setenv("ROCMIGRATE_TRUST_RULES_DIR", str(tmp_path))  # the user trusts this tree
    src = _project(tmp_path, 'rules-dir = "../team_rules"\n')
    converted = _cli("convert", str(src), "-o", str(tmp_path / "out"), "--format", "json")
    assert converted.exit_code == 0, converted.output
    assert "TMX001" in _codes(json.loads(converted.stdout))["main.cu"]
    linted = _cli("lint", str(src / "main.cu"), "--select", "TMX", "--output-format", "json")
    assert linted.exit_code == 1
    assert [f["code"] for f in json.loads(linted.stdout)["findings"]] == ["TMX001"]
    # given on the command line instead, with no configuration file
    (src / ".rocmigrate.toml").unlink()
    flagged = _cli("lint", str(src / "main.cu"), "--rules-dir", str(rules), "--select", "TMX001")
    assert flagged.exit_code == 1 and "TMX001" in flagged.output


def test_an_edited_table_row_converts_again(tmp_path: Path):
    """The cache keys on the rules' and tables' content, not on the package version: a copy of
    the package whose table maps a name differently re-converts an unchanged source."""
    import shutil
    import subprocess
    import sys

    from conftest import ROOT

    package = tmp_path / "package"
    for name in ("migrator", "rules", "templates"):
        shutil.copytree(ROOT / name, package / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.cu").write_bytes(CUDA_FILE)

    def convert() -> dict:
        done = subprocess.run([sys.executable, "-m", "migrator", "convert", str(src), "-o",
                               str(tmp_path / "out"), "--format", "json"],
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(package)), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return {f["path"]: f["status"] for f in json.loads(done.stdout)["files"]}

    assert convert()["main.cu"] == "converted"
    assert convert()["main.cu"] == "cached"
    manual = package / "rules" / "api" / "manual.tsv"
    row = "cudaFree\thipFreeRenamed\tfunction\truntime\tMemory Management\t\t\t\t1.5.0\t\t\t\t\tsupported\n"
    manual.write_text(manual.read_text() + row)
    assert convert()["main.cu"] == "converted"
    assert b"hipFreeRenamed(d)" in (tmp_path / "out" / "main.cu").read_bytes()


def _shout(rel: str, data: bytes, settings) -> "FileResult":
    """A processor of the runner's kind: any per-file step (here: upper-case the text)."""
    from migrator.results import FileResult

    output = data.upper()
    return FileResult(rel, "converted" if output != data else "unchanged", output=output)


def test_the_runner_takes_a_per_file_processor(tmp_path: Path):
    """The runner is not tied to the conversion: discovery, the pool, atomic writes, the cache
    and copies serve any per-file processor (build, report and harness steps)."""
    from migrator.runner import RunOptions, process_all, run
    from migrator.settings import Settings

    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    for index in range(12):  # enough files for the process pool
        (src / "sub" / f"k{index}.cu").write_bytes(b"kernel %d\n" % index)
    (src / "notes.txt").write_bytes(b"not code\n")
    seen = []
    result = run(RunOptions(src, tmp_path / "out", jobs=2), Settings(), processor=_shout,
                 report=lambda total, lines: seen.append((total, lines)))
    assert {r.rel: r.status for r in result.results}["sub/k3.cu"] == "converted"
    assert (tmp_path / "out" / "sub" / "k3.cu").read_bytes() == b"KERNEL 3\n"
    assert (tmp_path / "out" / "notes.txt").read_bytes() == b"not code\n"  # copied
    assert seen == [(12, 1)] * 12
    again = run(RunOptions(src, tmp_path / "out"), Settings())  # the conversion: not cached
    assert {r.rel: r.status for r in again.results}["sub/k3.cu"] == "unchanged"
    assert (tmp_path / "out" / "sub" / "k3.cu").read_bytes() == b"kernel 3\n"
    assert [r.output for r in process_all([("a.cu", b"x")], _shout, Settings(), 1)] == [b"X"]


def test_translation_units_and_the_unit_each_included_file_is_compiled_in(tmp_path: Path):
    """build's units (.cu, .hip, C++ holding GPU code) are the units harness reads an included
    file through: the first one by path that includes it and that no file includes."""
    from migrator.workspace.units import compiled_in, translation_units

    tree = {"b.cpp": '#include <hip/hip_runtime.h>\n#include "k.h"\n',
            "a.cpp": '#include "plain.h"\n', "c.hip": '#include "k.h"\n#include "deep.cu"\n',
            "k.h": '#include "deep.cu"\n', "plain.h": "", "deep.cu": ""}
    for rel, text in tree.items():
        (tmp_path / rel).write_text(text)
    files = sorted(tree)
    assert translation_units(tmp_path, files) == ["b.cpp", "c.hip", "deep.cu"]
    assert compiled_in(tmp_path, files) == {"deep.cu": "b.cpp", "k.h": "b.cpp",
                                            "plain.h": "plain.h"}
