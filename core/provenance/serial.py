"""Typed reading of records decoded from JSON, store metadata or database rows.

A record written by Chunkscope is read back through ``Fields``: a read-only view of one
mapping that returns each field with the type asked for, or raises ``RecordError`` with
one line naming the field's path (``run.json: queries[3].ranks.late: expected an integer
or null, got 'x'``). Writing stays with each record's ``to_dict``, so no JSON shape
changes; reading accepts exactly what the writers produce:

- an integer is a JSON integer (``bool`` is not one); a float written as a whole number
  (``3.0``) also reads as ``3``, since some stores keep every number as a float;
- a float is any JSON number (``bool`` excluded);
- a boolean is ``true``/``false`` or the integers 0 and 1 (SQLite keeps booleans so);
- a string is a JSON string; nothing is converted to one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from core.errors import RecordError

T = TypeVar("T")


class _Missing:
    """The default of a required field (``None`` is a value a field may have)."""


_MISSING = _Missing()


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def as_int(value: object, where: str) -> int:
    """``value`` as an ``int``: an integer or a whole float, never a bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise RecordError(f"{where}: expected an integer, got {_shown(value)}")


def as_float(value: object, where: str) -> float:
    """``value`` as a ``float``: any number but a bool."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise RecordError(f"{where}: expected a number, got {_shown(value)}")


def as_bool(value: object, where: str) -> bool:
    """``value`` as a ``bool``: a bool, or the integer 0 or 1."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise RecordError(f"{where}: expected true or false, got {_shown(value)}")


def as_str(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    raise RecordError(f"{where}: expected a string, got {_shown(value)}")


def as_stored(value: object, where: str) -> object:
    """A field kept as it was written (read later by its own reader)."""
    return value


def as_list(value: object, where: str) -> list[object]:
    if not isinstance(value, list | tuple):
        raise RecordError(f"{where}: expected a list, got {_shown(value)}")
    return list(value)


def optional(read: Callable[[object, str], T]) -> Callable[[object, str], T | None]:
    """A reader that also accepts ``None`` (JSON ``null``)."""

    def read_optional(value: object, where: str) -> T | None:
        return None if value is None else read(value, where)

    return read_optional


class Fields:
    """Read-only typed access to one record; ``where`` names it in every error."""

    __slots__ = ("_data", "where")

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, Mapping):
            raise RecordError(f"{where}: expected an object, got {_shown(data)}")
        self._data: Mapping[str, object] = data
        self.where = where

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def path(self, key: str) -> str:
        return f"{self.where}.{key}"

    def raw(self, key: str, default: object = _MISSING) -> object:
        """The field as stored; a missing required field is a ``RecordError``."""
        if key in self._data:
            return self._data[key]
        if isinstance(default, _Missing):
            raise RecordError(f"{self.where}: the field {key!r} is missing")
        return default

    def read(
        self, key: str, read: Callable[[object, str], T], default: T | _Missing = _MISSING
    ) -> T:
        """One field through ``read`` (``as_int``, ``optional(as_float)``, ...);
        ``default`` when it is missing (required when no default is given)."""
        if key not in self._data:
            if isinstance(default, _Missing):
                raise RecordError(f"{self.where}: the field {key!r} is missing")
            return default
        return read(self._data[key], self.path(key))

    # The three readers below return a field of exactly their type at once (what
    # ``as_int``/``as_bool``/``as_str`` return it as); anything else goes through them.

    def integer(self, key: str, default: int | _Missing = _MISSING) -> int:
        value = self._data.get(key)
        if type(value) is int:
            return value
        return self.read(key, as_int, default)

    def number(self, key: str, default: float | _Missing = _MISSING) -> float:
        return self.read(key, as_float, default)

    def boolean(self, key: str, default: bool | _Missing = _MISSING) -> bool:
        value = self._data.get(key)
        if type(value) is bool:
            return value
        return self.read(key, as_bool, default)

    def string(self, key: str, default: str | _Missing = _MISSING) -> str:
        value = self._data.get(key)
        if type(value) is str:
            return value
        return self.read(key, as_str, default)

    def optional_integer(self, key: str) -> int | None:
        """An integer or ``None``; a missing field is ``None``."""
        return self.read(key, optional(as_int), None)

    def optional_number(self, key: str) -> float | None:
        """A number or ``None``; a missing field is ``None``."""
        return self.read(key, optional(as_float), None)

    def record(self, key: str) -> Fields:
        """A nested object (required)."""
        return Fields(self.raw(key), self.path(key))

    def records(self, key: str, *, required: bool = True) -> Iterator[Fields]:
        """Each object of a list field (an absent optional list is empty)."""
        for index, item in enumerate(self.items_of(key, required=required)):
            yield Fields(item, f"{self.path(key)}[{index}]")

    def items_of(self, key: str, *, required: bool = True) -> list[object]:
        """A list field as stored (an absent optional list, or null, is empty)."""
        value = self.raw(key) if required else self._data.get(key)
        if value is None and not required:
            return []
        return as_list(value, self.path(key))

    def list_of(
        self, key: str, read: Callable[[object, str], T], *, required: bool = True
    ) -> list[T]:
        """A list field, each item through ``read``."""
        value = self.raw(key) if required else self._data.get(key)
        if value is None and not required:
            return []
        return list_of(value, self.path(key), read)

    def mapping_of(
        self, key: str, read: Callable[[object, str], T], required: bool = True
    ) -> dict[str, T]:
        """An object field of string keys, each value through ``read`` (an absent or
        null optional field is empty)."""
        value = self.raw(key) if required else self._data.get(key)
        if value is None and not required:
            return {}
        return mapping_of(value, self.path(key), read)


def mapping_of(value: object, where: str, read: Callable[[object, str], T]) -> dict[str, T]:
    """``value`` as a ``dict`` of string keys, each value through ``read``."""
    if not isinstance(value, Mapping):
        raise RecordError(f"{where}: expected an object, got {_shown(value)}")
    return {as_str(k, where): read(v, f"{where}.{k}") for k, v in value.items()}


def list_of(value: object, where: str, read: Callable[[object, str], T]) -> list[T]:
    """``value`` as a list, each item through ``read``."""
    return [read(item, f"{where}[{i}]") for i, item in enumerate(as_list(value, where))]


def list_reader(read: Callable[[object, str], T]) -> Callable[[object, str], list[T]]:
    """A reader of a list whose items all go through ``read``."""

    def read_list(value: object, where: str) -> list[T]:
        return list_of(value, where, read)

    return read_list


def mapping_reader(read: Callable[[object, str], T]) -> Callable[[object, str], dict[str, T]]:
    """A reader of an object whose values all go through ``read`` (for nested maps)."""

    def read_mapping(value: object, where: str) -> dict[str, T]:
        return mapping_of(value, where, read)

    return read_mapping


def json_objects(
    data: bytes, name: str, *, what: str, error: type[Exception], limit: int = 2_000_000
) -> list[dict[str, object]]:
    """The JSON objects of a JSONL file or a JSON list, in order (a file a user hands in:
    an import of chunks, a retrieval log). ``error`` (one line, naming the file and the
    line or record) for text that is not UTF-8, not JSON, empty, longer than ``limit``
    records, or holds anything but objects; ``what`` says what the file should hold."""
    import json

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{name} is not UTF-8 text (bad byte at {exc.start})") from None
    body = text.strip()
    if not body:
        raise error(f"{name} is empty: give a JSONL or JSON file of {what}")
    rows: object
    if body.startswith("["):
        try:
            rows = json.loads(body)
        except json.JSONDecodeError as exc:
            raise error(f"{name} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    else:
        found: list[object] = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise error(f"{name} line {number} is not JSON ({exc.msg})") from None
                if len(found) > limit:
                    raise error(f"{name} has more than {limit:,} records")
        rows = found
    if not isinstance(rows, list) or not rows:
        raise error(f"{name} holds no records: give a JSONL or JSON file of {what}")
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise error(f"{name} record {number} is not a JSON object")
    return rows
