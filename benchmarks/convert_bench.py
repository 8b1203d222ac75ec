#!/usr/bin/env python3
"""End-to-end conversion benchmark: rocmigrate vs PyTorch's hipify on a generated CUDA project.

Not a test. It:

1. generates a deterministic CUDA project (``corpus.generate_corpus``, default 200,000 lines
   counted as newlines: a few hundred files, mostly plain C++ around kernels and runtime calls;
   ``--corpus dense`` for the API-heavy tree instead) or copies a real one (``--tree``);
2. copies it twice and times, in one run:
   - ``rocmigrate convert COPY1 -o OUT1 --rocm 6.4`` (a subprocess; wall clock incl. interpreter
     start-up), with the default jobs and again with ``--jobs 1`` into a fresh output; always
     for ROCm 6.4, not the default ``--rocm auto`` (the HIP installed on the machine), so that
     figures from machines with different HIP releases, or none, compare;
   - ``torch.utils.hipify.hipify_python.hipify`` over COPY2 in a subprocess of a Python that has
     torch 2.13.0 (wall clock incl. ``import torch``, and the call alone);
   - an unchanged re-run of rocmigrate on OUT1 (its content-hash cache), as % of the full run
     (text summary, as the full run; once more with ``--format json``, reported only);
   - a re-run after editing one source file, checking that exactly one file was re-converted;
3. prints throughput, the rocmigrate/torch ratios (end-to-end and against the hipify() call
   alone), the targets, output coverage and a few sanity counts (code vs comments and literals,
   told apart by ``migrator.parsing.tokens``).

Usage: python benchmarks/convert_bench.py [--lines 200000] [--workdir DIR]
                                          [--torch-python PATH] [--rocmigrate CMD]

Run it with a Python that has rocmigrate installed; torch runs in its own interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from corpus import (generate_corpus, generate_dense_corpus, generate_probe_corpus,
                    generate_samples_corpus)
from migrator.parsing.tokens import LiteralSpans, blank_literals

GENERATORS = {"mixed": generate_corpus, "dense": generate_dense_corpus,
              "probe": generate_probe_corpus, "samples": generate_samples_corpus}

TORCH_VERSION = "2.13.0"
DEFAULT_TORCH_VENV = Path.home() / ".cache" / "rocmigrate-bench" / "torch-venv"
TARGET_RATIO = 2.0  # rocmigrate >= 2x torch end-to-end throughput
TARGET_RERUN_PCT = 5.0  # unchanged re-run < 5% of a full run
# every rocmigrate run converts for one fixed ROCm release, whatever HIP the machine has
# installed (``--rocm auto``, the default, would pick that one): figures stay comparable
ROCM = ["--rocm", "6.4"]

# --------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------

# (pattern, where): "code" is the file with its comments, literals and include directives
# blanked (migrator.parsing.tokens), "lit" those alone, "all" the whole file
SANITY_PATTERNS = {
    "cudaMalloc (code)": (rb"\bcudaMalloc\b", "code"),
    "cuda*/cublas*/curand* identifiers (code)": (rb"\b(?:cuda|cublas|curand)[A-Z]\w*", "code"),
    "cuda* in comments/strings": (rb"\bcuda[A-Z]\w*", "lit"),
    "hip* identifiers (code)": (rb"\b(?:hip|hipblas|hiprand)[A-Z]\w*", "code"),
    "#include <cuda_runtime.h>": (rb"#include\s*<cuda_runtime\.h>", "all"),
    "__shfl_down_sync (code)": (rb"\b__shfl_down_sync\b", "code"),
    "<<< launches (code)": (rb"<<<", "code"),
    "hipLaunchKernelGGL (code)": (rb"\bhipLaunchKernelGGL\b", "code"),
}


def sanity_counts(paths: list[Path]) -> dict[str, int]:
    counts = dict.fromkeys(SANITY_PATTERNS, 0)
    compiled = {k: (re.compile(p), where) for k, (p, where) in SANITY_PATTERNS.items()}
    for path in paths:
        data = path.read_bytes()
        spans = LiteralSpans(data)
        hays = {"code": blank_literals(data, spans), "all": data,
                "lit": b"\n".join(data[s:e] for s, e in zip(spans.starts, spans.ends))}
        for key, (rx, where) in compiled.items():
            counts[key] += len(rx.findall(hays[where]))
    return counts


SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                   ".inl")


def copy_tree(tree: Path, root: Path) -> dict:
    """Copy the C/C++/CUDA files of a real tree (symlinks and other files left out)."""
    by_ext: dict[str, int] = {}
    lines = size = 0
    folders = set()
    for path in sorted(tree.rglob("*")):
        if path.is_symlink() or not path.is_file() or not path.name.endswith(SOURCE_SUFFIXES):
            continue
        rel = path.relative_to(tree)
        data = path.read_bytes()
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        lines += data.count(b"\n")
        size += len(data)
        by_ext[path.suffix] = by_ext.get(path.suffix, 0) + 1
        folders.add(str(rel.parent))
    return {"files": sum(by_ext.values()), "lines": lines, "bytes": size,
            "by_ext": dict(sorted(by_ext.items())), "folders": len(folders), "tree": str(tree)}


def count_lines(root: Path) -> tuple[int, list[str]]:
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    return sum((root / r).read_bytes().count(b"\n") for r in rels), rels


# --------------------------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------------------------

def run_timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - t0, proc


def fresh_output(out: Path) -> None:
    """Remove a previous run's output and let the file system finish the removal (sync)."""
    if out.exists():
        shutil.rmtree(out)
    os.sync()
    time.sleep(0.5)


def check_ok(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        sys.stderr.write(f"{what} failed with exit code {proc.returncode}\n")
        sys.stderr.write(proc.stdout[-4000:] + "\n" + proc.stderr[-4000:] + "\n")
        raise SystemExit(1)


TORCH_DRIVER = r"""
import json, os, sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
from torch.utils.hipify import hipify_python
t2 = time.perf_counter()
src, out, report = sys.argv[1], sys.argv[2], sys.argv[3]
result = hipify_python.hipify(project_directory=src, output_directory=out, includes=["*"],
                              show_detailed=False, show_progress=False,
                              is_pytorch_extension=True)
t3 = time.perf_counter()
files = {}
for path, res in result.items():
    rel = os.path.relpath(path, out)
    hip = res.hipified_path
    files[rel] = {"hipified": os.path.relpath(hip, out) if hip else None, "status": res.status}
json.dump({"torch": torch.__version__, "import_torch_s": t1 - t0, "import_hipify_s": t2 - t1,
           "call_s": t3 - t2, "files": files}, open(report, "w"))
"""


def ensure_torch_python(arg: str | None, venv: Path) -> str:
    if arg:
        return arg
    py = venv / "bin" / "python"
    probe = [str(py), "-c", "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == "
             f"'{TORCH_VERSION}' else 1)"]
    if py.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return str(py)
    print(f"creating {venv} with torch=={TORCH_VERSION} (cached for later runs)...", flush=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", f"torch=={TORCH_VERSION}"],
                   check=True)
    if subprocess.run(probe, capture_output=True).returncode != 0:
        raise SystemExit(f"{py} does not import torch {TORCH_VERSION}")
    return str(py)


def default_rocmigrate() -> str:
    found = shutil.which("rocmigrate")
    if found:
        return found
    beside = Path(sys.executable).with_name("rocmigrate")
    if beside.exists():
        return str(beside)
    return "/tmp/venv/bin/rocmigrate"


def rocmigrate_version(cmd: list[str]) -> str:
    """migrator.__version__, read with the interpreter named in the rocmigrate script's shebang
    (rocmigrate has no --version option); '?' when that cannot be found."""
    exe = shutil.which(cmd[0]) or cmd[0]
    py = cmd[0] if len(cmd) > 1 and "python" in Path(cmd[0]).name else None
    if py is None:
        try:
            first = Path(exe).read_bytes()[:200].split(b"\n")[0].decode()
            py = first[2:].strip().split()[0] if first.startswith("#!") else None
        except (OSError, UnicodeDecodeError, IndexError):
            py = None
    if not py:
        return "?"
    proc = subprocess.run([py, "-c", "import migrator; print(migrator.__version__)"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "?"


def machine_info() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    try:
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        load = ""
    return {
        "loadavg": load,
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu": cpu, "memory": mem, "python": platform.python_version(),
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=200_000, help="corpus size in lines (newlines)")
    ap.add_argument("--workdir", type=Path, help="work folder (default: a new temp folder)")
    ap.add_argument("--torch-python", help="a python with torch 2.13.0 (default: a cached venv)")
    ap.add_argument("--torch-venv", type=Path, default=DEFAULT_TORCH_VENV,
                    help=f"where the default torch venv lives (default: {DEFAULT_TORCH_VENV})")
    ap.add_argument("--rocmigrate", help="rocmigrate command (default: rocmigrate on PATH or "
                    "beside this python)")
    ap.add_argument("--seed", type=int, default=None, help="corpus seed")
    ap.add_argument("--corpus", choices=tuple(GENERATORS), default="mixed",
                    help="generated tree: mixed (mostly C++, the default), dense (API-heavy "
                    "host and kernel code), probe (kernels/ replicated with varied names: "
                    "API-dense real code) or samples (the corpus's small programs with their "
                    "build files, replicated); see benchmarks/corpus/")
    ap.add_argument("--tree", type=Path, help="benchmark on a copy of this real tree instead of "
                    "a generated one (C/C++/CUDA files only are copied; --lines is ignored)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each full conversion and the unchanged re-run N times; the "
                    "fastest counts (default 1)")
    ap.add_argument("--skip-jobs1", action="store_true", help="skip the --jobs 1 run")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = ap.parse_args(argv)
    args.repeat = max(1, args.repeat)

    rocmigrate = shlex.split(args.rocmigrate) if args.rocmigrate else [default_rocmigrate()]
    made_tmp = args.workdir is None
    work = Path(tempfile.mkdtemp(prefix="rocmigrate-bench-")) if made_tmp else args.workdir
    work = work.resolve()
    if work.exists() and any(work.iterdir()):
        # only ever remove what this script creates
        for sub in ("corpus", "src_rocmigrate", "src_torch", "out_rocmigrate",
                    "out_rocmigrate_j1", "out_torch", "torch_report.json"):
            p = work / sub
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    work.mkdir(parents=True, exist_ok=True)
    torch_py = ensure_torch_python(args.torch_python, args.torch_venv)

    info = machine_info()
    res: dict = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 "machine": info, "workdir": str(work)}
    print(f"machine: nproc={info['nproc']} cpu={info['cpu']!r} mem={info['memory']} "
          f"python={info['python']} ({info['platform']}); load average {info['loadavg']}")
    if info["loadavg"] and float(info["loadavg"].split()[0]) > 0.5:
        print("warning: the machine is busy (load average above 0.5); timings will be noisy")
    res["rocmigrate_version"] = rocmigrate_version(rocmigrate)

    # 1. corpus ------------------------------------------------------------------------------
    corpus = work / "corpus"
    t0 = time.perf_counter()
    if args.tree is not None:
        stats = copy_tree(args.tree, corpus)
    else:
        generate = GENERATORS[args.corpus]
        stats = generate(corpus, args.lines, **({} if args.seed is None else {"seed": args.seed}))
    print(f"corpus: {stats['files']} files in {stats['folders']} folders, {stats['lines']} lines, "
          f"{stats['bytes'] / 1e6:.1f} MB, {stats['by_ext']} "
          f"(generated in {time.perf_counter() - t0:.1f} s) -> {corpus}")
    res["corpus"] = stats

    # 2. two copies ---------------------------------------------------------------------------
    src1, src2 = work / "src_rocmigrate", work / "src_torch"
    shutil.copytree(corpus, src1)
    shutil.copytree(corpus, src2)
    lines1, rels = count_lines(src1)
    lines2, rels2 = count_lines(src2)
    assert lines1 == lines2 == stats["lines"] and rels == rels2
    n_lines = lines1
    out1, out1j, out2 = work / "out_rocmigrate", work / "out_rocmigrate_j1", work / "out_torch"

    # Full runs. With --repeat N each is run N times (fresh outputs each time, the tools
    # interleaved) and the fastest run counts: the usual way to damp noise from other load.
    # Each tool's output is removed right before its own run and the file system synced, so
    # that no run pays for the deletion of an output before it (ext4 finishes a large rm's
    # work while the next writer creates its files: the first tool after the removals of all
    # three outputs paid up to a second for it).
    cmd_full = rocmigrate + ["convert", str(src1), "-o", str(out1)] + ROCM
    cmd_j1 = rocmigrate + ["convert", str(src1), "-o", str(out1j), "--jobs", "1"] + ROCM
    report = work / "torch_report.json"
    cmd_torch = [torch_py, "-c", TORCH_DRIVER, str(src2), str(out2), str(report)]
    full_runs, j1_runs, torch_runs = [], [], []
    for rep in range(args.repeat):
        tag = f" [{rep + 1}/{args.repeat}]" if args.repeat > 1 else ""
        fresh_output(out1)
        print(f"\n$ {shlex.join(cmd_full)}{tag}", flush=True)
        t, proc = run_timed(cmd_full)
        check_ok(proc, "rocmigrate")
        full_runs.append(t)
        print(f"  {t:.2f} s")
        if not args.skip_jobs1:
            fresh_output(out1j)
            print(f"$ {shlex.join(cmd_j1)}{tag}", flush=True)
            t, proc = run_timed(cmd_j1)
            check_ok(proc, "rocmigrate --jobs 1")
            j1_runs.append(t)
            print(f"  {t:.2f} s")
        fresh_output(out2)
        print(f"$ {torch_py} -c '<hipify driver>' {src2} {out2} {report}{tag}", flush=True)
        t, proc = run_timed(cmd_torch)
        check_ok(proc, "torch hipify")
        tr_run = json.loads(report.read_text())
        torch_runs.append((t, tr_run))
        print(f"  {t:.2f} s wall (import torch {tr_run['import_torch_s']:.2f} s, import hipify "
              f"{tr_run['import_hipify_s']:.2f} s, hipify() {tr_run['call_s']:.2f} s)")
    t_full = min(full_runs)
    res["rocmigrate_full"] = {"cmd": shlex.join(cmd_full), "wall_s": t_full, "runs": full_runs}
    if not args.skip_jobs1:
        res["rocmigrate_jobs1"] = {"cmd": shlex.join(cmd_j1), "wall_s": min(j1_runs),
                                   "runs": j1_runs}
    t_torch = min(t for t, _ in torch_runs)
    tr = dict(min(torch_runs, key=lambda x: x[0])[1])
    tr["call_s"] = min(r["call_s"] for _, r in torch_runs)
    res["torch"] = {"cmd": (f"{torch_py} -c 'import torch; from torch.utils.hipify import "
                            "hipify_python; hipify_python.hipify(project_directory=SRC, "
                            "output_directory=OUT, includes=[\"*\"], show_detailed=False, "
                            "show_progress=False, is_pytorch_extension=True)'"),
                    "version": tr["torch"], "wall_s": t_torch, "call_s": tr["call_s"],
                    "import_torch_s": tr["import_torch_s"],
                    "import_hipify_s": tr["import_hipify_s"],
                    "runs": [t for t, _ in torch_runs],
                    "call_runs": [r["call_s"] for _, r in torch_runs]}

    # unchanged re-run (also repeated; it changes nothing), with the full run's text summary;
    # then once with --format json, whose document holds every finding (reported, not a target)
    cmd_rerun_text = rocmigrate + ["convert", str(src1), "-o", str(out1)] + ROCM
    cmd_rerun = cmd_rerun_text + ["--format", "json"]
    rerun_runs = []
    for rep in range(args.repeat):
        print(f"$ {shlex.join(cmd_rerun_text)}   # unchanged", flush=True)
        t, proc = run_timed(cmd_rerun_text)
        check_ok(proc, "rocmigrate re-run")
        rerun_runs.append(t)
        print(f"  {t:.2f} s  {proc.stdout.splitlines()[0] if proc.stdout else ''}")
    t_rerun = min(rerun_runs)
    print(f"$ {shlex.join(cmd_rerun)}   # unchanged, JSON report", flush=True)
    t_rerun_json, proc = run_timed(cmd_rerun)
    check_ok(proc, "rocmigrate re-run (json)")
    rerun_summary = json.loads(proc.stdout)["summary"]["files"]
    print(f"  {t_rerun_json:.2f} s  files={rerun_summary}")
    res["rocmigrate_rerun"] = {"cmd": shlex.join(cmd_rerun_text), "wall_s": t_rerun,
                               "runs": rerun_runs, "files": rerun_summary,
                               "pct_of_full": 100 * t_rerun / t_full,
                               "json_wall_s": t_rerun_json}

    # edit one file, re-run
    edited = next(r for r in rels if r.endswith(".cu") and "cudaMalloc" in (src1 / r).read_text())
    path = src1 / edited
    path.write_text(path.read_text() + "\n// benchmark edit: one more helper\n"
                    "__global__ void bench_edit_kernel(float* p) { p[threadIdx.x] = 0.0f; }\n"
                    "void bench_edit_alloc(float** p) { cudaMalloc(p, 64); }\n")
    print(f"$ {shlex.join(cmd_rerun)}   # after editing {edited}", flush=True)
    t_edit, proc = run_timed(cmd_rerun)
    check_ok(proc, "rocmigrate edited re-run")
    edit_summary = json.loads(proc.stdout)["summary"]["files"]
    one_ok = edit_summary.get("converted") == 1
    print(f"  {t_edit:.2f} s  files={edit_summary}  exactly one re-converted: {one_ok}")
    res["rocmigrate_edit"] = {"edited": edited, "wall_s": t_edit, "files": edit_summary,
                              "exactly_one": one_ok, "pct_of_full": 100 * t_edit / t_full}

    # 3. coverage and sanity -------------------------------------------------------------------
    rm_outputs = [out1 / r for r in rels]
    rm_have = sum(p.is_file() for p in rm_outputs)
    torch_map = tr["files"]
    torch_outputs, torch_status = [], {}
    for r in rels:
        entry = torch_map.get(r)
        st = entry["status"] if entry else "missing"
        torch_status[st] = torch_status.get(st, 0) + 1
        if entry and entry["hipified"]:
            torch_outputs.append(out2 / entry["hipified"])
    torch_have = sum(p.is_file() for p in torch_outputs)
    res["coverage"] = {"inputs": len(rels), "rocmigrate_outputs": rm_have,
                       "torch_outputs": torch_have, "torch_status": torch_status}
    # counts on the first (unedited) conversion: rocmigrate's --jobs 1 output when present
    rm_count_root = out1j if not args.skip_jobs1 else out1
    res["sanity"] = {
        "input": sanity_counts([corpus / r for r in rels]),
        "rocmigrate": sanity_counts([rm_count_root / r for r in rels
                                     if (rm_count_root / r).is_file()]),
        "torch": sanity_counts([p for p in torch_outputs if p.is_file()]),
    }

    # report -----------------------------------------------------------------------------------
    rm_lps = n_lines / t_full
    torch_lps = n_lines / t_torch
    torch_call_lps = n_lines / tr["call_s"]
    ratio = rm_lps / torch_lps
    ratio_call = rm_lps / torch_call_lps
    rerun_pct = 100 * t_rerun / t_full
    res["summary"] = {"lines": n_lines, "rocmigrate_lines_per_s": rm_lps,
                      "torch_lines_per_s": torch_lps, "torch_call_lines_per_s": torch_call_lps,
                      "ratio": ratio, "ratio_call_only": ratio_call,
                      "rerun_pct": rerun_pct,
                      "target_ratio_met": ratio >= TARGET_RATIO,
                      "target_rerun_met": rerun_pct < TARGET_RERUN_PCT,
                      "exactly_one_reconverted": one_ok}
    w = 44
    print("\n" + "=" * 78)
    print(f"corpus: {n_lines} lines, {len(rels)} files; machine: nproc={info['nproc']}, "
          f"python {info['python']}; rocmigrate {res['rocmigrate_version']}, torch {tr['torch']}")
    print(f"{'run':<{w}} {'seconds':>9} {'lines/s':>11}")
    print(f"{'rocmigrate (default jobs), end-to-end':<{w}} {t_full:>9.2f} {rm_lps:>11,.0f}")
    if not args.skip_jobs1:
        t_j1 = res["rocmigrate_jobs1"]["wall_s"]
        print(f"{'rocmigrate --jobs 1, end-to-end':<{w}} {t_j1:>9.2f} {n_lines / t_j1:>11,.0f}")
    print(f"{'torch hipify, end-to-end (incl. import)':<{w}} {t_torch:>9.2f} {torch_lps:>11,.0f}")
    print(f"{'torch hipify, hipify() call only':<{w}} {tr['call_s']:>9.2f} {torch_call_lps:>11,.0f}")
    print(f"{'rocmigrate unchanged re-run':<{w}} {t_rerun:>9.2f}   ({rerun_pct:.1f}% of full)")
    print(f"{'rocmigrate unchanged re-run, --format json':<{w}} {t_rerun_json:>9.2f}   "
          f"({100 * t_rerun_json / t_full:.1f}% of full; the document lists every finding)")
    print(f"{'rocmigrate re-run after editing 1 file':<{w}} {t_edit:>9.2f}   "
          f"({100 * t_edit / t_full:.1f}% of full; converted={edit_summary.get('converted')})")
    if args.repeat > 1:
        fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        print(f"(fastest of {args.repeat}; all runs: rocmigrate [{fmt(full_runs)}]"
              + (f", --jobs 1 [{fmt(j1_runs)}]" if j1_runs else "")
              + f", torch [{fmt(res['torch']['runs'])}], hipify() "
              f"[{fmt(res['torch']['call_runs'])}], re-run [{fmt(rerun_runs)}])")
    print(f"\nratio rocmigrate/torch (end-to-end): {ratio:.2f}x")
    print(f"ratio rocmigrate/torch (hipify() call only): {ratio_call:.2f}x")
    print(f"target rocmigrate >= {TARGET_RATIO:.0f}x torch end-to-end: "
          f"{'MET' if ratio >= TARGET_RATIO else 'NOT MET'}")
    print(f"target unchanged re-run < {TARGET_RERUN_PCT:.0f}% of full: "
          f"{'MET' if rerun_pct < TARGET_RERUN_PCT else 'NOT MET'} ({rerun_pct:.1f}%)")
    print(f"edited re-run converted exactly 1 file: {'yes' if one_ok else 'NO'}")
    print(f"\noutputs: {len(rels)} inputs; rocmigrate wrote {rm_have}; torch has {torch_have} "
          f"(statuses {torch_status})")
    print(f"\n{'sanity count':<{w}} {'input':>9} {'rocmigrate':>11} {'torch':>9}")
    for key in SANITY_PATTERNS:
        print(f"{key:<{w}} {res['sanity']['input'][key]:>9} "
              f"{res['sanity']['rocmigrate'][key]:>11} {res['sanity']['torch'][key]:>9}")
    print("\ncommands:")
    print(f"  {res['rocmigrate_full']['cmd']}")
    if not args.skip_jobs1:
        print(f"  {res['rocmigrate_jobs1']['cmd']}")
    print(f"  {res['torch']['cmd']}")
    print(f"  {res['rocmigrate_rerun']['cmd']}   (unchanged; with --format json once more, and "
          "after the edit)")
    res["loadavg_end"] = machine_info()["loadavg"]
    print(f"\nload average at start: {info['loadavg']}; at end: {res['loadavg_end']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    if made_tmp and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"\nwork folder kept: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
