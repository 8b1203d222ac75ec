"""One task of an array job, on a node: ``python -m migrator.cluster.job WORK BATCH INDEX``
runs the INDEX-th item of ``WORK/batches/BATCH.json`` and writes its record into
``WORK/results/``: the result, or the error that stopped it. Exit status 0 when it wrote a
result, 1 for an error of the item, 2 when the task itself cannot start (bad arguments, an
unreadable item)."""

from __future__ import annotations

import socket
import sys
import time
import traceback
from pathlib import Path

from . import work as folder
from .kinds import KINDS, function_of

ERROR_TAIL = 4000  # characters of a traceback kept in a record


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[2].isdigit():
        print("usage: python -m migrator.cluster.job WORK BATCH INDEX", file=sys.stderr)
        return 2
    work, batch, index = Path(argv[0]), argv[1], int(argv[2])
    digests = folder.read_batch(work, batch) if batch.replace("-", "").isalnum() else None
    if digests is None or index >= len(digests):
        print(f"no item {index} in batch {batch!r} of {work}", file=sys.stderr)
        return 2
    digest = digests[index]
    item = folder.read_item(work, digest)
    if item is None or item["kind"] not in KINDS:
        print(f"item {digest} of {work} is missing, altered or of an unknown kind",
              file=sys.stderr)
        return 2
    node, start = socket.gethostname(), time.perf_counter()
    print(f"rocmigrate: {item['kind']} {item.get('key', '')} on {node}", flush=True)
    try:
        result = function_of(item["kind"])(item["arguments"])
    except Exception:  # the item's own failure: recorded, so it is not submitted again
        error = traceback.format_exc()[-ERROR_TAIL:]
        print(error, file=sys.stderr)
        folder.write_result(work, digest, {"error": error.strip().splitlines()[-1],
                                           "traceback": error, "node": node,
                                           "seconds": round(time.perf_counter() - start, 3)})
        return 1
    folder.write_result(work, digest, {"result": result, "node": node,
                                       "seconds": round(time.perf_counter() - start, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
