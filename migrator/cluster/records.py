"""Dataclasses to and from a job's JSON record (a Build, a Run, a Toolchain...): ``record_of``
writes one, ``from_record`` reads one back, checking it is one (a record is read from a shared
folder: untrusted). Tuple fields come back as tuples, dataclass fields as dataclasses."""

from __future__ import annotations

import dataclasses
import typing


class RecordError(ValueError):
    """A record is not one of the dataclass it should be."""


def record_of(value) -> dict:
    return dataclasses.asdict(value)


def from_record(cls, record: object):
    """An instance of the dataclass ``cls`` from ``record``: its fields by name (those with
    defaults may be missing), nothing else; values of the simple types its annotations name."""
    if not isinstance(record, dict):
        raise RecordError(f"a {cls.__name__} record is not an object")
    hints = typing.get_type_hints(cls)
    fields = {field.name: field for field in dataclasses.fields(cls) if field.init}
    unknown = set(record) - set(fields)
    if unknown:
        raise RecordError(f"a {cls.__name__} record has unknown keys {sorted(unknown)}")
    values = {}
    for name, field in fields.items():
        if name not in record:
            if field.default is dataclasses.MISSING and \
                    field.default_factory is dataclasses.MISSING:
                raise RecordError(f"a {cls.__name__} record lacks {name!r}")
            continue
        values[name] = _checked(record[name], hints[name], f"{cls.__name__}.{name}")
    return cls(**values)


def _checked(value, hint, where: str):
    """``value`` as of type ``hint`` (str, int, float, bool, None, dict, a dataclass, list and
    tuple of those, unions); RecordError where it is not."""
    if dataclasses.is_dataclass(hint):
        return from_record(hint, value)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        for option in typing.get_args(hint):
            try:
                return _checked(value, option, where)
            except RecordError:
                continue
        raise RecordError(f"{where}: {value!r} is none of {hint}")
    if hint is type(None):
        if value is None:
            return None
        raise RecordError(f"{where}: expected null")
    if origin is tuple:
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list")
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_checked(item, args[0], where) for item in value)
        if len(args) != len(value):
            raise RecordError(f"{where}: expected {len(args)} items")
        return tuple(_checked(item, arg, where) for item, arg in zip(value, args))
    if origin is list:
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list")
        (arg,) = typing.get_args(hint) or (typing.Any,)
        return [_checked(item, arg, where) for item in value]
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise RecordError(f"{where}: expected an object")
        return value
    if hint is typing.Any or hint is object:
        return value
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise RecordError(f"{where}: expected a number")
    if hint in (str, int, bool):
        if type(value) is hint:
            return value
        raise RecordError(f"{where}: expected {hint.__name__}")
    raise RecordError(f"{where}: cannot read a {hint}")
