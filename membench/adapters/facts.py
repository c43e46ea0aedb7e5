"""`<base>+facts`: any adapter over "value + facts" keys (the best LongMemEval setting in its paper).

Why: a fact such as "The user was pre-approved for $350,000 by Wells Fargo" names what a later question asks
about in words the chat turn may not use. The wrapper ranks with the base adapter over the same haystack
with ``with_facts=True``: each turn document gets the facts drawn from it appended (``about``), and each
session document gets all of its session's facts. So the ranking differs from the base adapter's only
through fact text; granularities, declared metadata and tie rule are the base's.

The facts come from the facts stage (model-extracted, ``results/{dataset}/facts/llm``) or, for LoCoMo,
from the dataset's own observations (``.../facts/observation``); the rank stage passes that folder to
``SessionStore(..., facts_dir=...)``. Without facts in the haystack it ranks exactly like the base.

Parameters: ``base`` (adapter name or ``module:Class``, default ``bm25``) and the base's own parameters.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from membench.adapters.base import Adapter
from membench.sessions.view import Haystack, Query


class FactsAdapter(Adapter):
    """Rank with a base adapter over documents that carry their facts."""

    name = "bm25+facts"
    needs_facts = True

    def __init__(self, base: str = "bm25", **base_params: Any):
        from membench.adapters.registry import load_adapter  # late: the registry imports this module

        if not isinstance(base, str) or not base:
            raise ValueError("the facts adapter needs `base`: the name of the adapter to wrap")
        self.base = load_adapter(base, base_params)
        if getattr(self.base, "needs_facts", False):
            raise ValueError(f"base adapter {base!r} already adds facts")
        super().__init__(base=base, **base_params)
        self.name = f"{self.base.name}+facts"
        self.granularities = tuple(self.base.granularities)
        self.uses_metadata = tuple(self.base.uses_metadata)

    def config(self) -> dict[str, Any]:
        return {"base": self.params["base"], "base_config": self.base.config(), "with_facts": True}

    def bind_context(self, context: Any) -> None:
        bind = getattr(self.base, "bind_context", None)
        if callable(bind):
            bind(context)

    def rank(self, query: Query, haystack: Haystack, granularity: str, k: int) -> list[tuple[str, float]]:
        return self.base.rank(query, dataclasses.replace(haystack, with_facts=True), granularity, k)
