"""Parsing and validating model replies.

A reply that cannot be used is a :class:`MalformedReply` with a one-line ``reason`` that can be shown to
the model again (the client's repair request) and to the user (the failure record). A malformed reply is
never turned into a value: callers get a failure, not a guessed answer or score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["MalformedReply", "parse_json_object", "json_object_parser", "wants_json", "parse_text", "parse_reply"]

_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)


class MalformedReply(ValueError):
    """A reply that does not have the shape that was asked for."""

    def __init__(self, reason: str, text: str | None = None):
        self.reason = reason
        self.text = text
        super().__init__(f"malformed reply: {reason}")


def _snippet(text: str, n: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _type_name(t: Any) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_name(x) for x in t)
    return getattr(t, "__name__", str(t))


def _check_type(value: Any, expected: Any) -> bool:
    types = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in types:  # bool is an int in Python; not for us
        return False
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, types)


def _candidates(text: str) -> list[str]:
    """Texts to try as JSON, most specific first: fenced blocks, the whole text, the outermost {...}."""
    out: list[str] = []
    for m in _FENCE_RE.finditer(text):
        lang = m.group(1).lower()
        if lang in ("", "json", "json5", "javascript", "js"):
            out.append(m.group(2).strip())
    out.append(text.strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        out.append(text[start:end + 1])
    return out


def parse_json_object(text: str | None,
                      required_keys: Iterable[str] | Mapping[str, Any] = ()) -> dict:
    """Parse a reply that should be one JSON object.

    Accepted: the bare object; the object inside a ```json (or bare ```) fence, with prose around it; an
    object embedded in prose (the outermost ``{...}``). ``required_keys`` is a list of key names, or a
    mapping ``key -> type`` (or tuple of types) that also checks value types (``bool`` never passes for
    ``int``; ``int`` passes for ``float``). Raises :class:`MalformedReply` with the reason otherwise.
    """
    if text is None or not str(text).strip():
        raise MalformedReply("empty reply; expected a JSON object", text)
    text = str(text)
    obj: Any = None
    first_error: str | None = None
    for cand in _candidates(text):
        try:
            obj = json.loads(cand)
        except ValueError as exc:
            if first_error is None:
                first_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}" if hasattr(exc, "msg") else str(exc)
            continue
        if isinstance(obj, dict):
            break
    else:
        if obj is not None and not isinstance(obj, dict):
            raise MalformedReply(f"expected a JSON object, got a JSON {type(obj).__name__}: {_snippet(text)!r}", text)
        raise MalformedReply(f"not valid JSON ({first_error}): {_snippet(text)!r}", text)

    if isinstance(required_keys, Mapping):
        missing = [k for k in required_keys if k not in obj]
        if missing:
            raise MalformedReply(f"JSON object lacks required key(s) {', '.join(missing)}; "
                                 f"it has {', '.join(map(str, obj)) or 'no keys'}", text)
        for key, expected in required_keys.items():
            if expected is not None and not _check_type(obj[key], expected):
                raise MalformedReply(f"key '{key}' should be {_type_name(expected)}, "
                                     f"got {type(obj[key]).__name__} {obj[key]!r:.60}", text)
    else:
        missing = [k for k in required_keys if k not in obj]
        if missing:
            raise MalformedReply(f"JSON object lacks required key(s) {', '.join(missing)}; "
                                 f"it has {', '.join(map(str, obj)) or 'no keys'}", text)
    return obj


def json_object_parser(required_keys: Iterable[str] | Mapping[str, Any] = (),
                       check: Callable[[dict], None] | None = None, schema: dict | None = None) -> Callable[[str], dict]:
    """A ``parse`` callable for :meth:`LLMClient.complete_many`.

    ``check(obj)`` may raise :class:`MalformedReply` (or ``ValueError``) for further validation, e.g. a
    score range: ``json_object_parser({"score": int}, check=lambda o: ...)``. The callable carries ``json_schema``
    (``schema``, else one built from the keys and their types), which a client in JSON mode asks the server to hold
    its decoding to; a parser that wraps this one passes it on (:func:`wants_json`).
    """
    keys = dict(required_keys) if isinstance(required_keys, Mapping) else tuple(required_keys)

    def parse(text: str) -> dict:
        obj = parse_json_object(text, keys)
        if check is not None:
            try:
                check(obj)
            except MalformedReply:
                raise
            except ValueError as exc:
                raise MalformedReply(str(exc), text) from exc
        return obj

    parse.json_schema = schema or _schema(keys)  # what a client in JSON mode asks the server for
    return parse


def wants_json(parse: Callable[[str], Any], like: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse``, marked as wanting the JSON object ``like`` (a :func:`json_object_parser`) wants."""
    parse.json_schema = like.json_schema
    return parse


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object",
               (int, float): "number"}


def _schema(keys: Mapping[str, Any] | tuple) -> dict:
    """A JSON schema for an object with the required ``keys`` (typed where a type maps to a JSON one)."""
    props = {k: ({"type": _JSON_TYPES[t]} if isinstance(keys, Mapping) and t in _JSON_TYPES else {})
             for k, t in (keys.items() if isinstance(keys, Mapping) else ((k, None) for k in keys))}
    return {"type": "object", "properties": props, "required": list(props)}


def parse_text(text: str | None) -> str:
    """A ``parse`` callable for free-text replies: the stripped text; empty is malformed."""
    if text is None or not str(text).strip():
        raise MalformedReply("empty reply", text)
    return str(text).strip()


def parse_reply(parse: Callable[[str], Any] | None, text: str | None) -> Any:
    """``parse(text)`` as the client applies it: an empty reply is malformed, no ``parse`` returns the text, and a
    ``ValueError`` from ``parse`` (json errors and friends) counts as malformed; other errors are bugs."""
    if text is None or not str(text).strip():
        raise MalformedReply("empty reply", text)
    if parse is None:
        return text
    try:
        return parse(text)
    except MalformedReply:
        raise
    except ValueError as exc:
        raise MalformedReply(str(exc), text) from exc
