"""The API key: where it comes from, and that it goes nowhere but the ``openai`` client.

Why its own module: the key is the one secret membench holds. It is never part of a cache key or record, and every
log message, error text and repr the client produces (including error bodies a server echoes back) passes through
:meth:`ApiKey.redact`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from membench.llm.errors import LLMConfigError
from membench.llm.transport import ENV_BASE_URL

NO_KEY_PLACEHOLDER = "EMPTY"  # what vLLM/Ollama-style servers accept when no key is configured


class ApiKey:
    """A key and where it came from (``"argument"``, ``"$<VAR>"`` or ``"none"``); not printable, not picklable."""

    __slots__ = ("__value", "source")

    def __init__(self, value: str, source: str):
        self.__value = str(value)
        self.source = source

    @classmethod
    def resolve(cls, api_key: str | None, api_key_env: str, base_url: str | None,
                env: Mapping[str, str] | None = None) -> "ApiKey":
        """The key given, else ``$api_key_env``, else (for a local server at ``base_url``) the no-key placeholder;
        with neither a key nor a ``base_url``, :class:`LLMConfigError`."""
        env = os.environ if env is None else env
        source = "argument"
        if api_key is None and api_key_env:
            api_key = env.get(api_key_env) or None
            source = f"${api_key_env}"
        if api_key is None:
            if base_url is None:
                raise LLMConfigError(f"no API key: set ${api_key_env} (or point llm.base_url / ${ENV_BASE_URL} "
                                     f"at a local OpenAI-compatible server)")
            api_key, source = NO_KEY_PLACEHOLDER, "none"
        return cls(api_key, source)

    def reveal(self) -> str:
        """The key itself: for the ``openai`` client only."""
        return self.__value

    def redact(self, text: Any) -> str:
        """``str(text)`` with the key replaced by ``***``."""
        s = str(text)
        key = self.__value
        if key and key != NO_KEY_PLACEHOLDER and len(key) >= 6 and key in s:
            s = s.replace(key, "***")
        return s

    def describe(self) -> str:
        """What a repr may say about the key."""
        return "none" if self.source == "none" else f"<set from {self.source}, hidden>"

    def __repr__(self) -> str:
        return f"ApiKey({self.describe()})"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("an API key is not picklable")
