#!/usr/bin/env python3
"""What `rocmigrate harness` can generate without hand edits over a CUDA corpus, and why not.

Not a test. For every ``*-cuda`` program folder of CORPUS (HeCBench's ``src/`` layout), writes
the harness specs (``migrator.harness.run.generate``: the libclang front end and the
launch-site values; nothing is converted, built or run) into a scratch folder and counts:
specs, specs usable as generated, specs that need an edit grouped by reason (a spec may give
several), and where the defaults came from: pointer counts (a ``cudaMalloc``, the kernel's
indexing, the size parameters' product), size parameters (a launch site, a default, a default
lowered to fit the indexing) and launches (a launch site's, its block with a covering grid, none).

Usage: python benchmarks/harness_specs.py CORPUS_SRC [--json FILE] [--programs N]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator.harness.run import HarnessError, HarnessOptions, generate  # noqa: E402

# a needs_edit reason with what varies per kernel (names, types, lines) taken out
_REASONS = (
    ("points to a pointer", "a pointer to pointers"),
    ("is a struct passed by value", "a struct passed by value"),
    ("whose fields are not all of one arithmetic type", "a pointer to a struct of mixed fields"),
    ("looks like an index array", "an index array (values must stay in bounds)"),
    ("instantiates it nowhere", "a template never instantiated in its file"),
    ("explicit specialization", "an explicit specialization (template arguments unknown)"),
    ("is not a constant: set launch.shared_bytes", "dynamic shared memory not a constant"),
    ("no launch site gives its size", "dynamic shared memory without a launch site"),
    ("bytes, not", "an element size the front end and the type disagree on"),
    ("cannot be filled", "a parameter kind the harness cannot fill"),
)


def reason(text: str) -> str:
    for marker, name in _REASONS:
        if marker in text:
            return name
    return re.sub(r"\b\w+\.(?:cu|h|cuh)\b|\d+", "_", text)[:80]


def origin_kind(origin: str) -> str:
    if origin.startswith("cudaMalloc"):
        return "cudaMalloc" + (" (raised to the indexing)" if "raised" in origin else "")
    if origin.startswith("the kernel's indexing where"):
        return "indexing (a lower bound)"
    if origin.startswith("the kernel's indexing"):
        return "kernel's indexing"
    if origin.startswith("default size, lowered"):
        return "default lowered to fit the indexing"
    if origin.startswith("launch site") and "unknown" in origin:
        return "launch site's block, covering grid"
    if origin.startswith("launch site"):
        return "launch site"
    if origin.startswith("no launch site"):
        return "no launch site: default"
    return origin.split(":")[0][:60]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--programs", type=int, default=0, help="only the first N programs")
    arguments = parser.parse_args()
    programs = sorted(d for d in arguments.corpus.glob("*-cuda") if d.is_dir())
    if arguments.programs:
        programs = programs[:arguments.programs]
    counts = collections.Counter()
    reasons, pointers, sizes, launches = (collections.Counter() for _ in range(4))
    per_program = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        for program in programs:
            out = Path(scratch) / program.name
            try:
                outcomes, _ = generate(HarnessOptions(program, out), lambda line: None)
            except HarnessError as err:
                per_program[program.name] = {"error": str(err)}
                counts["programs failed"] += 1
                continue
            usable = 0
            for outcome in outcomes:
                document = tomllib.loads((out / outcome.spec).read_text(encoding="utf-8"))
                edits = [part for part in document.get("needs_edit", "").split("; ") if part]
                for edit in edits:
                    reasons[reason(edit)] += 1
                usable += not edits and not outcome.spec_error
                launches[origin_kind(document["launch"]["origin"])] += 1
                for parameter in document["parameters"]:
                    if parameter["kind"] == "pointer":
                        pointers[origin_kind(parameter.get("origin", ""))] += 1
                    elif "origin" in parameter and parameter.get("origin") != "default value":
                        sizes[origin_kind(parameter["origin"])] += 1
            counts["programs"] += 1
            counts["programs with kernels"] += bool(outcomes)
            counts["programs with a usable spec"] += bool(usable)
            counts["specs"] += len(outcomes)
            counts["usable as generated"] += usable
            counts["need an edit"] += sum(bool(o.needs_edit or o.spec_error) for o in outcomes)
            per_program[program.name] = {"specs": len(outcomes), "usable": usable}
    seconds = time.perf_counter() - started
    print(f"{counts['programs']} programs in {seconds:.0f} s: "
          + ", ".join(f"{key} {value}" for key, value in counts.items() if key != "programs"))
    for title, counter in (("needs an edit because", reasons), ("pointer counts from", pointers),
                           ("size and scalar values from", sizes), ("launches from", launches)):
        print(f"\n{title}:")
        for key, value in counter.most_common():
            print(f"  {value:5d}  {key}")
    if arguments.json:
        arguments.json.write_text(json.dumps(
            {"counts": counts, "reasons": reasons, "pointers": pointers, "sizes": sizes,
             "launches": launches, "programs": per_program, "seconds": round(seconds, 1)},
            indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
