"""The kinds of job a work item may name, each a function of one capability that takes the
item's JSON arguments and returns a JSON result. A fixed table: an item file (untrusted) can
only choose among these, never name code to import."""

from __future__ import annotations

import importlib
from typing import Callable

KINDS = {
    "validate.program": "migrator.validate.cluster:program_job",
    "harness.unit": "migrator.harness.cluster:unit_job",
    "build.part": "migrator.build.cluster:part_job",
}


def function_of(kind: str) -> Callable[[dict], dict]:
    """The function of ``kind``; KeyError for a kind not in the table."""
    module, name = KINDS[kind].split(":")
    return getattr(importlib.import_module(module), name)
