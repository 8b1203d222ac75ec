"""Pair check: do two versions of rocmigrate produce byte-identical outputs?

A refactor must not change what any command writes. This script runs one checkout of
rocmigrate over fixed inputs and records a digest of every file each command wrote (a
manifest); ``compare`` lists what differs between two manifests.

    python benchmarks/pair_check.py record --checkout /tmp/base --out /tmp/base.json
    python benchmarks/pair_check.py record --checkout . --out /tmp/head.json
    python benchmarks/pair_check.py compare /tmp/base.json /tmp/head.json
    python benchmarks/pair_check.py record --scope report --out /tmp/r.json  # one command only
    python benchmarks/pair_check.py compare /tmp/base.json /tmp/r.json --subset

What is run (``--scope`` picks a subset; every input is copied first, so outputs never
depend on where the input lies):

- ``convert``: kernels/, fixtures/, the HeCBench corpus's ``*-cuda`` programs and
  ``shared/corpus/projects`` (the CUDA projects, not their AMD ports), each under three
  settings: ``--rocm 6.4`` (the default target), ``--rocm 5.2`` and ``--rocm 6.4
  --no-optimize``; the converted tree and the ``--format json`` summary.
- ``lint``: ``--output-format json`` over kernels/ and the HeCBench ``*-cuda`` programs at
  6.4 and 5.2 (the findings, not the exit code alone).
- ``report``: ``report --full`` over kernels/ and the HeCBench programs at 6.4 and 5.2, and
  ``report --history`` over kernels/ made a git repository of three commits with fixed dates.
- ``build``: ``rocmigrate build`` of the converted kernels/ at 5.2 with hipcc (build.json
  and build.md), where hipcc is installed.
- ``validate`` and ``harness``: ``--build-only --gpu none`` over kernels/ (reports; the
  generated harness specs and sources).

Reports are normalised before hashing: wall-clock figures (keys ending ``_s``/``seconds``,
``duration``...), dates and the temporary folder are masked, since they differ from run to
run whatever the code. Every other byte counts. The checkout is run as ``python -m migrator``
with the checkout first on ``sys.path``, so two checkouts can share one virtual environment.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

SETTINGS = {
    "default": ["--rocm", "6.4"],
    "rocm52": ["--rocm", "5.2"],
    "no-optimize": ["--rocm", "6.4", "--no-optimize"],
}
TIMING_KEY = re.compile(
    r"(_s|_ms|_us|seconds|duration|elapsed|started|finished|date|time|when|load)$", re.I
)
DATE = re.compile(rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
DURATION = re.compile(rb"\b\d+(\.\d+)?\s?(s|ms|seconds|min)\b")
BUILD_SECONDS = re.compile(rb"(\| (?:yes|no) \| )\d+\.\d+( \|)")
TEMPORARY = re.compile(rb"/tmp/[^/\s\"'`]+")  # a command's own temporary folder


def inputs(scope: set[str]) -> dict[str, Path]:
    """The input trees by name (only those that exist here)."""
    found = {"kernels": ROOT / "kernels", "fixtures": ROOT / "fixtures"}
    if "corpus" in scope:
        hec = SHARED / "corpus" / "hecbench" / "src"
        if hec.is_dir():
            found["hecbench"] = hec
        projects = SHARED / "corpus" / "projects"
        if projects.is_dir():
            for project in sorted(projects.iterdir()):
                if project.is_dir() and not project.name.endswith("-hip"):
                    found[f"project-{project.name}"] = project
    return found


def copy_input(name: str, source: Path, work: Path) -> Path:
    """A copy of one input (HeCBench: only its CUDA programs) under work/inputs."""
    target = work / "inputs" / name
    shutil.rmtree(target, ignore_errors=True)  # a kept folder's copy may be of older inputs
    if name == "hecbench":
        target.mkdir(parents=True)
        for program in sorted(source.iterdir()):
            if program.name.endswith("-cuda"):
                shutil.copytree(program, target / program.name, symlinks=True)
    else:
        shutil.copytree(source, target, symlinks=True)
    return target


def history_repository(work: Path) -> Path:
    """kernels/ as a git repository of three commits with fixed dates (for report --history)."""
    repository = work / "history-repository"
    shutil.rmtree(repository, ignore_errors=True)
    shutil.copytree(work / "inputs" / "kernels", repository)
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.com",
               GIT_COMMITTER_NAME="A", GIT_COMMITTER_EMAIL="a@example.com")

    def git(*args: str, date: str = "2026-01-01T00:00:00Z") -> None:
        subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True,
                       env=dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date))

    git("init", "-q", "-b", "main")
    sources = sorted(p.name for p in repository.iterdir() if p.suffix == ".cu")
    git("add", *sources[:3])
    git("commit", "-q", "-m", "first")
    git("add", ".")
    git("commit", "-q", "-m", "second", date="2026-01-02T00:00:00Z")
    first = repository / sources[0]
    first.write_bytes(first.read_bytes().replace(b"cudaMalloc(", b"hipMalloc(", 1))
    git("commit", "-q", "-am", "third", date="2026-01-03T00:00:00Z")
    return repository


def normalise(data: bytes, work: Path, name: str) -> bytes:
    """Mask what differs between two runs of the same code: the work folder, times, dates."""
    data = TEMPORARY.sub(b"<TMP>", data.replace(str(work).encode(), b"<WORK>"))
    if name.endswith(".json"):
        try:
            value = json.loads(data)
        except ValueError:
            return data
        if name == "history-cache.json" and isinstance(value, dict):
            value.pop("key", None)  # a digest of rocmigrate's own code: changes with any edit
        return json.dumps(_mask(value), sort_keys=True).encode()
    if name.endswith((".md", ".txt", ".log", ".html")):
        if name == "build.md":  # its table's seconds column
            data = BUILD_SECONDS.sub(rb"\1<T>\2", data)
        return DURATION.sub(b"<T>", DATE.sub(b"<DATE>", data))
    return data


def _mask(value):
    if isinstance(value, dict):
        return {
            key: ("<T>" if TIMING_KEY.search(key) and not isinstance(val, (dict, list)) else _mask(val))
            for key, val in value.items()
        }
    if isinstance(value, list):
        return [_mask(item) for item in value]
    if isinstance(value, str):
        return DURATION.sub(b"<T>", DATE.sub(b"<DATE>", TEMPORARY.sub(b"<TMP>", value.encode()))).decode()
    return value


def digest_tree(tree: Path, work: Path) -> dict[str, str]:
    """sha256 of every file under tree (links by their target), keyed by relative path."""
    digests: dict[str, str] = {}
    if not tree.exists():
        return digests
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree).as_posix()
        if path.is_symlink():
            digests[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    digests[rel] = "binary"  # compiled output: its bytes embed build ids
                    continue
            if "/.rocmigrate/" in f"/{rel}" or rel.startswith(".rocmigrate/"):
                continue  # the cache: keyed by mtimes and tool version
            data = normalise(path.read_bytes(), work, path.name)
            digests[rel] = hashlib.sha256(data).hexdigest()
    return digests


def run(command: list[str], checkout: Path, work: Path, timeout: float = 3600) -> tuple[int, bytes]:
    env = dict(os.environ, PYTHONPATH=str(checkout), COLUMNS="100", NO_COLOR="1", TERM="dumb")
    proc = subprocess.run(
        [sys.executable, "-m", "migrator", *command],
        cwd=checkout, env=env, capture_output=True, timeout=timeout,
    )
    return proc.returncode, normalise(proc.stdout, work, "stdout.json")


def record(checkout: Path, out: Path, scope: set[str], keep: Path | None) -> None:
    work = Path(tempfile.mkdtemp(prefix="pair-check-")) if keep is None else keep
    work.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict] = {}
    trees = inputs(scope)
    started = time.monotonic()
    hipcc = shutil.which("hipcc") is not None

    def note(key: str, rc: int, stdout: bytes, tree: Path | None) -> None:
        kept = work / "stdout" / (key.replace("/", "__") + ".out")
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(stdout)  # normalised: diff two work folders' stdout/ to see a difference
        files = digest_tree(tree, work) if tree is not None else {}
        manifest[key] = {
            "rc": rc,
            "stdout": hashlib.sha256(stdout).hexdigest(),
            "files": files,
        }
        print(f"{time.monotonic() - started:7.1f}s  {key}: rc {rc}, {len(files)} files", flush=True)

    for name, source in trees.items():
        copy_input(name, source, work)
    for previous in ("convert", "build-src", "build-report", "validate", "harness", "report", "stdout"):
        shutil.rmtree(work / previous, ignore_errors=True)  # a kept folder's last outputs
    if "convert" in scope:
        for name in trees:
            src = work / "inputs" / name
            for setting, flags in SETTINGS.items():
                dest = work / "convert" / setting / name
                rc, stdout = run(
                    ["convert", str(src), "-o", str(dest), "--format", "json", *flags], checkout, work
                )
                note(f"convert/{setting}/{name}", rc, stdout, dest)
    if "lint" in scope:
        for name in ("kernels", "hecbench"):
            if name not in trees:
                continue
            for setting in ("default", "rocm52"):
                rc, stdout = run(
                    ["lint", str(work / "inputs" / name), "--output-format", "json", *SETTINGS[setting]],
                    checkout, work,
                )
                note(f"lint/{setting}/{name}", rc, stdout, None)
    if "report" in scope:
        for name in ("kernels", "hecbench"):
            if name not in trees:
                continue
            for setting in ("default", "rocm52"):
                dest = work / "report" / setting / name
                rc, stdout = run(["report", str(work / "inputs" / name), "-o", str(dest), "--full",
                                  *SETTINGS[setting]], checkout, work)
                note(f"report/{setting}/{name}", rc, stdout, dest)
        repository = history_repository(work)
        dest = work / "report" / "history"
        rc, stdout = run(["report", str(repository), "-o", str(dest), "--history", "--rocm", "6.4"],
                         checkout, work)
        note("report/history/kernels", rc, stdout, dest)
    if "build" in scope and hipcc:
        converted = work / "build-src"
        run(["convert", str(work / "inputs" / "kernels"), "-o", str(converted), "--rocm", "5.2"], checkout, work)
        report = work / "build-report"
        rc, stdout = run(
            ["build", str(converted), "--source", str(work / "inputs" / "kernels"), "--report", str(report)],
            checkout, work,
        )
        note("build/rocm52/kernels", rc, stdout, report)
    for command in ("validate", "harness"):
        if command in scope:
            dest = work / command
            rc, stdout = run(
                [command, str(work / "inputs" / "kernels"), "-o", str(dest), "--build-only", "--gpu", "none"],
                checkout, work,
            )
            note(f"{command}/kernels", rc, stdout, dest)
    out.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"wrote {out} ({len(manifest)} runs, {time.monotonic() - started:.0f} s); work folder {work}")
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)


def compare(first: Path, second: Path, subset: bool = False) -> int:
    """Print each difference; with ``subset``, runs that only the first manifest has are left
    out (the second was recorded with a smaller --scope)."""
    a = json.loads(first.read_text())
    b = json.loads(second.read_text())
    differences = 0
    keys = set(b) if subset else set(a) | set(b)
    for key in sorted(keys):
        if key not in a or key not in b:
            print(f"{key}: only in {'the first' if key in a else 'the second'}")
            differences += 1
            continue
        left, right = a[key], b[key]
        if left["rc"] != right["rc"]:
            print(f"{key}: exit code {left['rc']} -> {right['rc']}")
            differences += 1
        if left["stdout"] != right["stdout"]:
            print(f"{key}: standard output differs")
            differences += 1
        for rel in sorted(set(left["files"]) | set(right["files"])):
            if left["files"].get(rel) != right["files"].get(rel):
                print(f"{key}: {rel} differs")
                differences += 1
    total = sum(len(entry["files"]) for entry in b.values())
    print("SAME" if not differences else f"{differences} differences", f"({len(b)} runs, {total} files)")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run one checkout and write its manifest")
    rec.add_argument("--checkout", type=Path, default=ROOT)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument(
        "--scope", default="convert,lint,report,build,validate,harness,corpus",
        help="comma-separated: convert, lint, report, build, validate, harness, corpus (the shared corpus)",
    )
    rec.add_argument("--keep", type=Path, help="work in this folder and keep it")
    cmp_ = sub.add_parser("compare", help="list what differs between two manifests")
    cmp_.add_argument("first", type=Path)
    cmp_.add_argument("second", type=Path)
    cmp_.add_argument("--subset", action="store_true",
                      help="the second was recorded with a smaller --scope: compare only its runs")
    args = parser.parse_args()
    if args.command == "record":
        record(args.checkout.resolve(), args.out, set(args.scope.split(",")), args.keep)
        return 0
    return compare(args.first, args.second, args.subset)


if __name__ == "__main__":
    sys.exit(main())
