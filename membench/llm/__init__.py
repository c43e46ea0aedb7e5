"""Opt-in model calls: one cached, retrying, metered OpenAI-compatible client.

Typical stage code::

    from membench.llm import from_config, json_object_parser, BudgetExceeded

    client = from_config(config, cache_path="results/llm/judge.calls.jsonl", stage="judge")
    try:
        replies = client.complete_many(requests, parse=json_object_parser({"score": int}), temperature=0)
    except BudgetExceeded as stop:
        log.warning(stop.message)       # clean stop; stop.results holds what was done (None = not made)
        replies = stop.results
    finally:
        client.close()
    cost_table = client.summary()
"""

import importlib
from typing import Any

# name -> the module that defines it. Imported on first use (PEP 562), so a stage that needs only
# `membench.llm.prompts` (the report, aggregation) does not pay ~1 s for importing openai with the client.
_HOMES = {
    "CallCache": "cache", "canonical_request": "cache", "make_key": "cache",
    "ENV_MODEL": "client", "LLMClient": "client", "Reply": "client",
    "LLMConfigError": "errors", "LLMError": "errors", "StopRequested": "errors",
    "CallPolicy": "policy", "from_config": "section", "ENV_BASE_URL": "transport", "safe_url": "transport",
    "BudgetExceeded": "pricing", "CostMeter": "pricing",
    "MalformedReply": "replies", "json_object_parser": "replies", "parse_json_object": "replies",
    "parse_text": "replies",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'membench.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"membench.llm.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
