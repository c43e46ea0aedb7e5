"""`<base>+facts`: any adapter over "value + facts" keys (the best LongMemEval setting in its paper).

Why: a fact such as "The user was pre-approved for $350,000 by Wells Fargo" names what a later question asks
about in words the chat turn may not use. The wrapper ranks with the base adapter over the same haystack
with ``with_facts=True``: each turn document gets the facts drawn from it appended (``about``), and each
session document gets all of its session's facts. So the ranking differs from the base adapter's only
through fact text; granularities, declared metadata and tie rule are the base's.

The facts come from the facts stage (model-extracted, ``results/{dataset}/facts/llm``) or, for LoCoMo,
from the dataset's own observations (``.../facts/observation``); the rank stage passes that folder to
``SessionStore(..., facts_dir=...)``. Without facts in the haystack it ranks exactly like the base.

Loaded as ``<base>+facts`` (e.g. ``bm25+facts``, ``my_memory:MySystem+facts``): the registry loads the base
with the run's parameters and wraps it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from membench.adapters.base import Adapter
from membench.sessions.view import Haystack, Query


class FactsAdapter(Adapter):
    """Rank with a base adapter over documents that carry their facts."""

    name = "bm25+facts"
    needs = frozenset({"facts"})

    def __init__(self, base: Adapter, base_name: str | None = None):
        if not isinstance(base, Adapter):
            raise ValueError("the facts adapter wraps a loaded adapter; name it as '<adapter>+facts' in config")
        if "facts" in base.needs:
            raise ValueError(f"base adapter {base.name!r} already adds facts")
        self.base = base
        self.needs = base.needs | {"facts"}
        super().__init__(base=base_name or base.name)
        self.name = f"{base.name}+facts"
        self.granularities = tuple(base.granularities)
        self._last: tuple[Haystack, Haystack] | None = None  # (a haystack, its with-facts copy)
        self.uses_metadata = tuple(base.uses_metadata)

    def config(self) -> dict[str, Any]:
        return {"base": self.params["base"], "base_config": self.base.config(), "with_facts": True}

    def bind_context(self, context: Any) -> None:
        bind = getattr(self.base, "bind_context", None)
        if callable(bind):
            bind(context)

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        return self.base.rank(query, self._with_facts(haystack), granularity, k)

    def embedder(self):
        return self.base.embedder()

    def document_texts(self, haystack: Haystack, granularity: str) -> list[str]:
        return self.base.document_texts(self._with_facts(haystack), granularity)

    def _with_facts(self, haystack: Haystack) -> Haystack:
        """The haystack with facts, one copy per haystack object, so its documents are built once for all the
        questions that search it."""
        if self._last is None or self._last[0] is not haystack:
            self._last = (haystack, dataclasses.replace(haystack, with_facts=True))
        return self._last[1]

    def query_texts(self, query: Query) -> list[str]:
        return self.base.query_texts(query)
