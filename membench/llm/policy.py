"""How a client makes its calls, as one frozen value: concurrency, timeout, retries and their waits, malformed-reply
rounds, and when a stage counts as failed.

Why one value: these numbers come from one place (the config's ``llm:`` section, read by
:meth:`CallPolicy.from_section`), are checked once, here, and are then read unchanged by the client, its transport
and the stages, instead of travelling as a dozen loose constructor arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from membench.errors import InputError

__all__ = ["CallPolicy", "PolicyError", "SECTION_KEYS"]

# the keys of the config's ``llm:`` section that are policy (the others name the endpoint, prices and prompts)
SECTION_KEYS = ("concurrency", "timeout", "max_retries", "backoff", "malformed_retries", "max_failed_share")


class PolicyError(ValueError):
    """A policy value out of range; ``field`` names it."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


@dataclass(frozen=True, kw_only=True)
class CallPolicy:
    """The rules every call of one client follows; the defaults are the config schema's.

    * ``concurrency``: requests in flight at once (``complete_many``).
    * ``timeout``: seconds one HTTP attempt may take.
    * ``max_retries``, ``backoff``, ``max_backoff``, ``max_retry_after``: transient HTTP errors are retried up to
      ``max_retries`` times, waiting ``backoff * 2**(n-1)`` (jittered, capped at ``max_backoff``) or what a
      Retry-After header asks (capped at ``max_retry_after``); see :mod:`membench.llm.transport`.
    * ``malformed_retries``, ``repair``: a reply the parser rejects is asked again up to ``malformed_retries``
      times, as a repair conversation (``repair=True``) or as the identical request.
    * ``retry_failed``: ask again a request whose last cached outcome is a failure (else serve the failure).
    * ``max_failed_share``: a stage whose failed calls exceed this share of its calls fails.
    * ``count_prior_spend``: paid calls already in the cache count against the budget.
    * ``json_mode``: a request whose parser wants a JSON object asks for one with its keys (`response_format:
      json_object` with a schema, which a llama.cpp server turns into a grammar); on for `llm.provider: local`.
    """

    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 1.0
    max_backoff: float = 30.0
    max_retry_after: float = 60.0
    malformed_retries: int = 2
    repair: bool = True
    retry_failed: bool = True
    max_failed_share: float = 0.02
    count_prior_spend: bool = True
    json_mode: bool = False

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            try:
                object.__setattr__(self, f.name, _TYPES[f.type](value))
            except (TypeError, ValueError):
                raise PolicyError(f.name, f"{f.name} must be {f.type}, got {value!r}") from None
        for name, (ok, rule) in _RULES.items():
            value = getattr(self, name)
            if not ok(value):
                raise PolicyError(name, f"{name} must be {rule}, got {value!r}")

    def replace(self, **changes: Any) -> "CallPolicy":
        """A copy with ``changes`` (checked like a new policy)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_section(cls, section: Mapping[str, Any], source: str = "config", **overrides: Any) -> "CallPolicy":
        """The policy of an ``llm:`` section (already merged with its stage's overrides); keys it does not set keep
        the defaults. ``overrides`` (any policy field) win over the section. A value out of range is an
        :class:`~membench.errors.InputError` naming ``llm.<key>``."""
        values = {key: section[key] for key in SECTION_KEYS if section.get(key) is not None}
        values.update(overrides)
        try:
            return cls(**values)
        except PolicyError as exc:
            raise InputError(source, str(exc), field=f"llm.{exc.field}") from None


_TYPES = {"int": int, "float": float, "bool": bool}
_RULES = {  # field -> (check, what the value must be)
    "concurrency": (lambda v: v >= 1, ">= 1"),
    "timeout": (lambda v: v > 0, "> 0"),
    "max_retries": (lambda v: v >= 0, ">= 0"),
    "backoff": (lambda v: v >= 0, ">= 0"),
    "max_backoff": (lambda v: v >= 0, ">= 0"),
    "max_retry_after": (lambda v: v >= 0, ">= 0"),
    "malformed_retries": (lambda v: v >= 0, ">= 0"),
    "max_failed_share": (lambda v: 0 <= v <= 1, "between 0 and 1"),
}
