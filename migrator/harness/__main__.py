"""``python -m migrator.harness DIR [--runs N] [--warmup N] [--timeout S] [--gpu G]``: run and judge harnesses
built elsewhere with ``rocmigrate harness --build-only -o DIR`` (a GPU machine needs only this
checkout, the standard library and numpy). Writes DIR/harness.json (and harness.md where jinja2
is installed); exit 0 when nothing failed or mismatched, 1 otherwise, 2 for bad input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..fsutil import atomic_write
from ..output.harness_json import render_json
from ..output.harness_text import render_summary
from .run import HarnessError, run_again


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m migrator.harness",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the -o folder of a --build-only run")
    parser.add_argument("--runs", type=int, default=10,
                        help="timed runs of each side (default 10; a timing verdict needs 7)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    parser.add_argument("--gpu", default=None, help="auto, none, nvidia, amd or nvidia,amd "
                        "(default: $ROCMIGRATE_GPU, else detect)")
    arguments = parser.parse_args(argv)
    if arguments.runs < 1 or arguments.warmup < 0 or arguments.timeout <= 0:
        parser.error("--runs must be at least 1, --warmup at least 0 and --timeout above 0")
    try:
        report = run_again(arguments.output, arguments.runs, arguments.timeout,
                           progress=lambda line: print(line, file=sys.stderr, flush=True),
                           warmup=arguments.warmup, gpu=arguments.gpu)
    except HarnessError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    written = [arguments.output / "harness.json"]
    atomic_write(written[0], render_json(report).encode())
    try:
        from ..output.harness_markdown import render_markdown

        markdown = render_markdown(report)
    except ImportError:  # no jinja2 on this machine: the JSON holds everything
        pass
    else:
        written.append(arguments.output / "harness.md")
        atomic_write(written[1], markdown.encode())
    sys.stdout.write(render_summary(report, [str(path) for path in written]))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
