"""The work folder the submitting command and its jobs share: ``items/DIGEST.json`` (what a
job runs: its kind and arguments), ``batches/NAME.json`` (the items of one array job, in task
order), ``results/DIGEST.json`` (the record a job writes when it ends), ``logs/`` (what each
task printed) and ``job.sh`` (the script every task runs). An item's digest covers its kind
and arguments, so that a record is reused only for the very same work. Everything read back
is untrusted (another user may share the folder): read within bounds, checked, and a bad file
is no result."""

from __future__ import annotations

import json
from pathlib import Path

from ..fsutil import MiB, content_hash, folder_inside, read_inside, write_inside

RECORD_LIMIT = 64 * MiB  # the most read of an item, batch or result file


def digest_of(kind: str, arguments: dict) -> str:
    """The item's name: a hash of its kind and arguments (JSON, keys sorted)."""
    return content_hash(json.dumps({"kind": kind, "arguments": arguments},
                                   sort_keys=True).encode())


def files_digest(files) -> str:
    """A hash of files, each (folder, relative path), by path and content (a missing or
    unreadable one by its path): in a job's arguments, it makes a changed source other work."""
    parts = []
    for folder, rel in files:
        try:
            digest = content_hash((folder / rel).read_bytes())
        except OSError:
            digest = "none"
        parts.append(f"{rel}\0{digest}")
    return content_hash("\n".join(parts).encode())


def prepare(work: Path, *folders: str) -> Path:
    """The work folder (its parent made where missing) and ``folders`` in it, none of them a
    symlink (UnsafePathError): the jobs' logs, builds and records, and what a command removes
    there when it ends, stay inside it. Returns the work folder's absolute path."""
    work.parent.mkdir(parents=True, exist_ok=True)
    folder_inside(work.parent, work.name)
    for name in folders:
        folder_inside(work, name)
    return work.resolve()


def write_json(work: Path, rel: str, value: object) -> None:
    """Write ``value`` as JSON, its objects' keys in their order (a program's JSON output keeps
    the order its results are compared in)."""
    write_inside(work, rel, (json.dumps(value, indent=1) + "\n").encode())


def read_json(work: Path, rel: str) -> object | None:
    """The JSON value in ``work/rel``, or None where there is none or it is unreadable."""
    try:
        data = read_inside(work, rel, RECORD_LIMIT)
    except OSError:
        return None
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def write_item(work: Path, digest: str, kind: str, arguments: dict, key: str) -> None:
    write_json(work, f"items/{digest}.json", {"kind": kind, "arguments": arguments, "key": key})


def read_item(work: Path, digest: str) -> dict | None:
    item = read_json(work, f"items/{digest}.json")
    if not (isinstance(item, dict) and isinstance(item.get("kind"), str)
            and isinstance(item.get("arguments"), dict)
            and digest_of(item["kind"], item["arguments"]) == digest):
        return None  # not what was written for this digest
    return item


def write_result(work: Path, digest: str, record: dict) -> None:
    write_json(work, f"results/{digest}.json", {"digest": digest, **record})


def read_result(work: Path, digest: str) -> dict | None:
    """The record a job wrote for ``digest``: {"digest", "result" (a dict) or "error" (text),
    "node", "seconds"}; None where there is none, or it is not such a record."""
    record = read_json(work, f"results/{digest}.json")
    if not (isinstance(record, dict) and record.get("digest") == digest
            and (isinstance(record.get("result"), dict) or isinstance(record.get("error"), str))):
        return None
    return record


def remove_result(work: Path, digest: str) -> None:
    from ..fsutil import remove_inside

    remove_inside(work, f"results/{digest}.json")


def read_batch(work: Path, name: str) -> list[str] | None:
    batch = read_json(work, f"batches/{name}.json")
    if isinstance(batch, list) and all(isinstance(digest, str) and digest.isalnum()
                                       for digest in batch):
        return batch
    return None


def log_tail(work: Path, name: str, limit: int = 2000) -> str:
    """The end of what task ``name`` (BATCH-INDEX) printed."""
    try:
        data = read_inside(work, f"logs/{name}.log", RECORD_LIMIT)
    except OSError:
        return ""
    return (data or b"")[-limit:].decode(errors="replace")
