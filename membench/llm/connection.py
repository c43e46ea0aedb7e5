"""The `openai.OpenAI` client of one LLMClient, built on the first paid attempt rather than with the LLMClient.

Importing openai (with its pydantic models) takes about a second; a stage whose calls the cache answers, such as a
rerun, never needs it. Several worker threads may make the first attempt at once, so the build is locked."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIConnection"]


class OpenAIConnection:
    """Call it for the client (built once); `close()` closes it if it was built."""

    def __init__(self, base_url: str | None, api_key: str, timeout: float):
        # max_retries 0: retries are the transport's
        self._args = {"base_url": base_url, "api_key": api_key, "timeout": timeout, "max_retries": 0}
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    def __call__(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(**self._args)
            return self._client

    @property
    def built(self) -> bool:
        return self._client is not None

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()

    def __getstate__(self):
        raise TypeError("OpenAIConnection holds a secret and is not picklable")

    def __repr__(self) -> str:
        return f"OpenAIConnection(base_url={self._args['base_url']!r}, built={self.built})"
