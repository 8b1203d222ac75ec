"""HeCBench builds through Slurm against the same builds here: throughput and the overhead per job.

For the first N programs ``src/NAME-cuda`` of a HeCBench corpus (or --names):

1. copies them into WORK/cuda/src and converts that tree with the installed rocmigrate
   (``convert --rocm 5.2 --offload-arch gfx90a``: Debian's hipcc 5.2 knows no newer target);
2. builds the converted tree here: ``rocmigrate build WORK/hip --report WORK/local -j SLOTS``
   (every program folder is a build root with its Makefile);
3. builds it as Slurm jobs: the same with ``--executor slurm`` (one job per build root, each
   asking for one CPU: SLOTS of them run at once on a node of SLOTS CPUs);
4. prints the wall times, programs per minute each way, the Slurm run's overhead per job (the
   time its slots were held, its wall time times the jobs running at once, less the jobs' own
   time, over the jobs: queueing, starting Python on the node, the wait for the next look at
   the queue), the extra wall time per job against the local build, and whether both runs built
   the same units.

Usage: python benchmarks/slurm_builds.py CORPUS [--programs 20] [--names A,B] [--slots 2]
       [--partition P] [--work DIR] [--json FILE]. CORPUS holds src/. Needs a running Slurm
       (.ci/slurm-up starts a one-node one) and hipcc. Never run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _rocmigrate() -> list[str]:
    found = Path(sys.executable).with_name("rocmigrate")
    return [str(found)] if found.exists() else [sys.executable, "-m", "migrator"]


def _timed(command: list[str], log: Path) -> tuple[float, int]:
    start = time.perf_counter()
    with log.open("w") as written:
        done = subprocess.run(command, stdout=written, stderr=subprocess.STDOUT)
    return time.perf_counter() - start, done.returncode


def _units(report: Path) -> list[tuple[str, str, bool]]:
    document = json.loads((report / "build.json").read_text())
    return [(unit["root"], unit["name"], unit["built"]) for unit in document["units"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--programs", type=int, default=20, help="the first N programs (default 20)")
    ap.add_argument("--names", help="comma-separated program names (NAME of NAME-cuda)")
    ap.add_argument("--slots", type=int, default=os.cpu_count() or 2,
                    help="parallel compiles here = Slurm jobs at once (one CPU each)")
    ap.add_argument("--partition", help="Slurm partition (default: the cluster's default)")
    ap.add_argument("--work", type=Path, help="work folder (kept; default: a temporary one)")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args(argv)

    source = args.corpus / "src"
    names = sorted(p.name[:-len("-cuda")] for p in source.glob("*-cuda") if
                   (p / "Makefile").is_file())
    if args.names:
        wanted = [name.strip() for name in args.names.split(",") if name.strip()]
        names = [name for name in wanted if name in names]
    else:
        names = names[:args.programs]
    if not names:
        print("no program to build", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="rocmigrate-slurm-bench-"))
    if work.exists():
        shutil.rmtree(work)
    (work / "cuda" / "src").mkdir(parents=True)
    for name in names:
        shutil.copytree(source / f"{name}-cuda", work / "cuda" / "src" / f"{name}-cuda",
                        symlinks=True)
    rocmigrate = _rocmigrate()
    seconds, code = _timed([*rocmigrate, "convert", str(work / "cuda"), "-o", str(work / "hip"),
                            "--rocm", "5.2", "--offload-arch", "gfx90a"], work / "convert.log")
    print(f"{len(names)} programs converted in {seconds:.1f} s (exit {code})", flush=True)
    build = [*rocmigrate, "build", str(work / "hip"), "-j", str(args.slots)]
    local_s, local_code = _timed([*build, "--report", str(work / "local")], work / "local.log")
    print(f"built here: {local_s:.1f} s (exit {local_code})", flush=True)
    slurm = [*build, "--report", str(work / "slurm"), "--executor", "slurm", "--retries", "0"]
    if args.partition:
        slurm += ["--partition", args.partition]
    slurm_s, slurm_code = _timed(slurm, work / "slurm.log")
    print(f"built as Slurm jobs: {slurm_s:.1f} s (exit {slurm_code})", flush=True)

    document = json.loads((work / "slurm" / "build.json").read_text())
    jobs = document["cluster"]["jobs"]
    own = sum(job["seconds"] for job in jobs)
    at_once = min(args.slots, len(jobs))
    same = _units(work / "local") == _units(work / "slurm")
    built = sum(built for *_, built in _units(work / "slurm"))
    figures = {
        "programs": len(names), "jobs": len(jobs), "slots": args.slots,
        "units": len(document["units"]), "units_built": built, "same_units": same,
        "local_s": round(local_s, 2), "slurm_s": round(slurm_s, 2),
        "programs_per_min_local": round(len(names) / local_s * 60, 1),
        "programs_per_min_slurm": round(len(names) / slurm_s * 60, 1),
        "overhead_per_job_s": round((slurm_s * at_once - own) / len(jobs), 2),
        "extra_wall_per_job_s": round((slurm_s - local_s) * at_once / len(jobs), 2),
        "jobs_own_s": round(own, 2),
        "slot_s": round(slurm_s * at_once, 2),
        "load_average": os.getloadavg(),
    }
    print(f"\n| programs | jobs | slots | here s | Slurm s | programs/min here | programs/min "
          f"Slurm | overhead per job s | extra wall per job s | jobs' own s / slot s | "
          f"same units |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {figures['programs']} | {figures['jobs']} | {args.slots} | {local_s:.1f} | "
          f"{slurm_s:.1f} | {figures['programs_per_min_local']} | "
          f"{figures['programs_per_min_slurm']} | {figures['overhead_per_job_s']} | "
          f"{figures['extra_wall_per_job_s']} | {own:.1f} / {slurm_s * at_once:.1f} | "
          f"{'yes' if same else 'NO'} |")
    print(f"\n{built} of {len(document['units'])} units built; load average "
          f"{' '.join(f'{x:.2f}' for x in figures['load_average'])}; work folder {work}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
