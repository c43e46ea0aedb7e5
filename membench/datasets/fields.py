"""Typed access to JSON records that fails with an InputError naming file, record and field.

Every parser reads through these helpers so a broken file ends in one clear error, never in a
KeyError or TypeError from deep inside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from membench.errors import InputError

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
               list: "a list", dict: "an object"}


def load_json(path: Path) -> Any:
    """Parse a JSON file; truncation or invalid syntax becomes an InputError with the position."""
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read())
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except UnicodeDecodeError as err:
        raise InputError(path, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise InputError(path, f"invalid or truncated JSON at line {err.lineno} column {err.colno}: {err.msg}") from None


def describe(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def expect(value: Any, kind: type | tuple[type, ...], path: Path, record: str | None, field: str | None) -> Any:
    """Check a value's JSON type (bool is not accepted as a number)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise InputError(path, f"expected {wanted}, got {describe(value)}", record, field)
    return value


def get(obj: dict, key: str, kind: type | tuple[type, ...], path: Path, record: str | None,
        prefix: str = "", optional: bool = False, default: Any = None) -> Any:
    """obj[key] with its type checked; a missing required key is an InputError."""
    name = f"{prefix}{key}"
    if key not in obj or (optional and obj[key] is None):
        if optional:
            return default
        raise InputError(path, "missing required field", record, name)
    return expect(obj[key], kind, path, record, name)


def nonempty_str(obj: dict, key: str, path: Path, record: str | None, prefix: str = "") -> str:
    value = get(obj, key, str, path, record, prefix)
    if not value.strip():
        raise InputError(path, "must not be empty", record, f"{prefix}{key}")
    return value


def unique(ids: list[str], path: Path, what: str, record: str | None = None) -> None:
    """Raise on the first duplicated id, naming it."""
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise InputError(path, f"duplicate {what} {item!r}", record, what)
        seen.add(item)
