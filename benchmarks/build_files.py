"""How well converted Makefiles build, against the human HIP ports' (HeCBench layout).

For each program ``src/NAME-cuda`` with a Makefile and a human twin ``src/NAME-hip``:

1. converts the folder with the installed rocmigrate (``convert SRC -o OUT --rocm 5.2
   --offload-arch gfx90a``: Debian's hipcc 5.2 / clang 15 knows no gfx942), into a copy of
   the corpus where it replaces the CUDA folder (Makefiles reach ``../other-cuda``);
2. compares the converted Makefile with the human one: nvcc left, nvcc-only options left,
   CUDA architectures left, AMD targets given, the libraries linked;
3. builds both with ``make`` as their Makefiles say (HIP_PLATFORM=amd, each build with a time
   limit; the human twins are built in place in a pristine copy, since their Makefiles name
   ``../NAME-cuda/`` files), and sorts the failures by the first error's class.

With ``--via-build METHOD`` (make or cmake) step 3 runs ``rocmigrate build FOLDER --method
METHOD`` instead of make (the converted side with ``--source`` the CUDA folder, so that errors
map to CUDA lines and rule codes), and classes each failure from its build.json.

Usage: python benchmarks/build_files.py CORPUS [--sample N] [--names A,B] [--jobs 2]
       [--work DIR] [--json FILE] [--rename-ext] [--no-human] [--via-build make|cmake].
       CORPUS holds src/. Never run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# what a converted Makefile should no longer say (nvcc, its own options, CUDA targets, libs)
_LEFTOVERS = {
    "nvcc": re.compile(r"(?<![\w.\-])nvcc(?![\w.\-])"),
    "nvcc option": re.compile(r"(?<!\S)(?:-Xcompiler|-Xptxas|-Xlinker|--?use_fast_math|-lineinfo"
                              r"|--expt-[\w-]+|--extended-lambda|-rdc|-dc|-ccbin|-G"
                              r"|--maxrregcount|-maxrregcount)(?![\w-])"),
    "CUDA architecture": re.compile(r"\b(?:sm|compute)_\d+|-gencode|(?<![\w-])-arch[= ]"),
    "CUDA library": re.compile(r"(?<!\S)-l(?:cu\w+|nccl|nvToolsExt|nvrtc)\b"),
    "CUDA path": re.compile(r"CUDA_(?:PATH|HOME|DIR|ROOT)|/usr/local/cuda"),
}
_LINK = re.compile(r"(?<!\S)-l([\w+]+)")
_ERROR_CLASSES = (  # the first matching line of a failed build names its class
    ("time limit", re.compile(r"^TIMEOUT")),
    # (rocmigrate build's errors read "KIND: FILE: error: MESSAGE")
    ("CMake: a command the suite's top-level CMake defines", re.compile(
        r"^cmake: .*Unknown CMake command")),
    ("CMake: a download (no network)", re.compile(r"^cmake: .*(?:FetchContent|git clone|"
                                                  r"Failed to (?:clone|download))")),
    ("CMake: no CMakeLists.txt at the top (it is in a subfolder)", re.compile(
        r"does not appear to contain CMakeLists\.txt")),
    ("CMake configure error", re.compile(r"^cmake: ")),
    ("unknown compiler option", re.compile(r"unknown argument|unsupported option|"
                                           r"unknown option")),
    ("missing library", re.compile(r"cannot find -l")),
    ("missing header", re.compile(r"error: .* file not found|No such file or directory"
                                  r".*\.(?:h|hpp|cuh)")),
    ("missing file (make)", re.compile(r"No rule to make target|No such file or directory")),
    ("undeclared name (source)", re.compile(r"error: use of undeclared identifier|"
                                            r"error: unknown type name|no member named")),
    ("link error", re.compile(r"undefined reference|undefined symbol|ld: error|"
                              r"linker command failed")),
    ("compile error (source)", re.compile(r"error:")),
    ("make error", re.compile(r"make: \*\*\*|make\[\d+\]: \*\*\*")),
)


def _rocmigrate() -> str:
    beside = Path(sys.executable).with_name("rocmigrate")
    return str(beside) if beside.exists() else (shutil.which("rocmigrate") or "rocmigrate")


def _programs(src: Path) -> list[str]:
    names = []
    for cuda in sorted(src.glob("*-cuda")):
        name = cuda.name[: -len("-cuda")]
        if (cuda / "Makefile").is_file() and (src / f"{name}-hip" / "Makefile").is_file():
            names.append(name)
    return names


def _convert(rocmigrate: str, source: Path, out: Path, rename: bool) -> tuple[bool, str]:
    if out.exists():
        shutil.rmtree(out)
    done = subprocess.run([rocmigrate, "convert", str(source), "-o", str(out), "--rocm", "5.2",
                           "--offload-arch", "gfx90a"] + ["--rename-ext"] * rename,
                          capture_output=True, text=True, timeout=600)
    return done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _compare(converted: str, human: str) -> dict:
    def words(text: str) -> str:  # comments out: they may name nvcc
        return "\n".join(line.split("#", 1)[0] for line in text.splitlines())

    ours, theirs = words(converted), words(human)
    found = {what: sorted(set(pattern.findall(ours))) for what, pattern in _LEFTOVERS.items()}
    human_left = {what: sorted(set(pattern.findall(theirs)))
                  for what, pattern in _LEFTOVERS.items()}
    return {"left": {k: v for k, v in found.items() if v},
            "human_left": {k: v for k, v in human_left.items() if v},
            "offload_arch": "--offload-arch" in ours,
            "libraries": sorted(set(_LINK.findall(ours))),
            "human_libraries": sorted(set(_LINK.findall(theirs)))}


def _build(folder: Path, timeout: int, jobs: int) -> dict:
    env = dict(os.environ, HIP_PLATFORM="amd", HCC_AMDGPU_TARGET="gfx90a")
    tmp = folder / ".build-tmp"
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    started = time.monotonic()
    try:
        done = subprocess.run(["nice", "-n", "10", "make", "-C", str(folder), f"-j{jobs}"],
                              env=env, capture_output=True, text=True, timeout=timeout)
        log, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as err:
        out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        log, code = "TIMEOUT\n" + out, -1
    shutil.rmtree(tmp, ignore_errors=True)
    result = {"built": code == 0, "seconds": round(time.monotonic() - started, 1)}
    if code != 0:
        result["class"], result["first_error"] = _classify(log)
    return result


def _build_with_rocmigrate(rocmigrate: str, folder: Path, method: str, source: Path | None,
                           timeout: int, report: Path) -> dict:
    """``rocmigrate build`` of ``folder`` through ``method``: built or not, and the class of
    the first error its report gives (or of its usage error: nothing to build that way)."""
    command = [rocmigrate, "build", str(folder), "--method", method, "--report", str(report),
               "-j", "1", "--timeout", str(timeout), "--offload-arch", "gfx90a"]
    if source is not None:
        command += ["--source", str(source)]
    started = time.monotonic()
    done = subprocess.run(["nice", "-n", "10", *command], capture_output=True, text=True,
                          timeout=timeout * 4)
    result = {"built": done.returncode == 0, "seconds": round(time.monotonic() - started, 1)}
    path = report / "build.json"
    if done.returncode == 2 or not path.is_file():
        result["class"] = f"no {method} build"
        result["first_error"] = (done.stderr.strip().splitlines() or [""])[-1][:300]
        return result
    document = json.loads(path.read_text())
    result["codes"] = document["summary"].get("codes", {})
    if not result["built"]:
        texts = []
        for unit in document["units"]:
            if not unit["built"]:
                texts += [f"{error.get('kind')}: {error.get('file') or ''}: error: "
                          f"{error.get('message', '')}" for error in unit.get("errors", [])]
                texts.append(unit.get("log_tail", ""))
        result["class"], result["first_error"] = _classify("\n".join(texts))
    return result


def _classify(log: str) -> tuple[str, str]:
    lines = log.splitlines()
    for name, pattern in _ERROR_CLASSES:
        for line in lines:
            if pattern.search(line):
                return name, line.strip()[:300]
    return "other", (lines[-1].strip()[:300] if lines else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the HeCBench checkout (holds src/)")
    parser.add_argument("--sample", type=int, default=0, help="only the first N programs")
    parser.add_argument("--names", default="", help="only these programs (comma-separated)")
    parser.add_argument("--jobs", type=int, default=1, help="builds at a time (make -j1 each)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per build")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: temp)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--rename-ext", action="store_true", help="convert with --rename-ext")
    parser.add_argument("--no-human", action="store_true",
                        help="build the converted Makefiles only")
    parser.add_argument("--via-build", choices=("make", "cmake"), default=None,
                        help="build through `rocmigrate build --method M` instead of make")
    args = parser.parse_args(argv)
    src = args.corpus / "src"
    if not src.is_dir():
        parser.error(f"{src} is no folder")
    names = _programs(src)
    if args.names:
        names = [name for name in names if name in args.names.split(",")]
    if args.sample:
        names = names[: args.sample]
    work = args.work or Path(tempfile.mkdtemp(prefix="build-files-"))
    human_src, converted_src = work / "human" / "src", work / "converted" / "src"
    for copy in (human_src, converted_src):
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(src, copy, symlinks=True)
    rocmigrate = _rocmigrate()
    results: dict[str, dict] = {}
    for name in names:
        ok, output = _convert(rocmigrate, src / f"{name}-cuda", converted_src / f"{name}-cuda",
                              args.rename_ext)
        entry = results[name] = {"converted": ok}
        if not ok:
            entry["convert_output"] = output
            continue
        entry.update(_compare((converted_src / f"{name}-cuda" / "Makefile").read_text(),
                              (human_src / f"{name}-hip" / "Makefile").read_text()))
    print(f"converted {sum(r['converted'] for r in results.values())}/{len(names)}",
          flush=True)

    def build(folder: Path, source: Path | None, side: str) -> dict:
        if args.via_build is None:
            return _build(folder, args.timeout, 1)
        return _build_with_rocmigrate(rocmigrate, folder, args.via_build, source, args.timeout,
                                      work / "reports" / side / folder.name)

    def build_pair(name: str) -> None:
        results[name]["build"] = build(converted_src / f"{name}-cuda", src / f"{name}-cuda",
                                       "converted") \
            if results[name]["converted"] else {"built": False, "class": "convert failed"}
        results[name]["human_build"] = {"built": False, "class": "not built"} if \
            args.no_human else build(human_src / f"{name}-hip", None, "human")
        print(f"{name}: converted {'ok' if results[name]['build']['built'] else 'FAIL'}, "
              f"human {'ok' if results[name]['human_build']['built'] else 'FAIL'}", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(build_pair, names))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True))
    print(_summary(results))
    return 0


def _summary(results: dict[str, dict]) -> str:
    total = len(results)
    built = sum(r.get("build", {}).get("built", False) for r in results.values())
    human = sum(r.get("human_build", {}).get("built", False) for r in results.values())
    both = sum(r.get("build", {}).get("built", False) and r["human_build"]["built"]
               for r in results.values())
    lines = [f"programs: {total}", f"converted builds: {built}/{total}",
             f"human HIP twin builds: {human}/{total}", f"both build: {both}/{total}"]
    for key, title in (("build", "converted"), ("human_build", "human")):
        classes: dict[str, list[str]] = {}
        for name, entry in sorted(results.items()):
            if not entry.get(key, {}).get("built", False):
                classes.setdefault(entry.get(key, {}).get("class", "?"), []).append(name)
        lines.append(f"{title} failures by class:")
        lines += [f"  {cls}: {len(names)} ({', '.join(names)})"
                  for cls, names in sorted(classes.items(), key=lambda item: -len(item[1]))]
    left: dict[str, int] = {}
    human_left: dict[str, int] = {}
    for entry in results.values():
        for what in entry.get("left", {}):
            left[what] = left.get(what, 0) + 1
        for what in entry.get("human_left", {}):
            human_left[what] = human_left.get(what, 0) + 1
    lines.append(f"CUDA leftovers in converted Makefiles (programs): {left or 'none'}")
    lines.append(f"CUDA leftovers in human Makefiles (programs): {human_left or 'none'}")
    same_libraries = sum(entry.get("libraries") == entry.get("human_libraries")
                         for entry in results.values() if entry["converted"])
    lines.append(f"same -l libraries as the human Makefile: {same_libraries}/{total}")
    lines.append(f"converted Makefiles naming --offload-arch: "
                 f"{sum(e.get('offload_arch', False) for e in results.values())}/{total}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
