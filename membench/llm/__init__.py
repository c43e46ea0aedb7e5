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

from membench.llm.cache import CallCache, canonical_request, make_key
from membench.llm.client import ENV_MODEL, LLMClient, Reply
from membench.llm.errors import LLMConfigError, LLMError, StopRequested
from membench.llm.policy import CallPolicy
from membench.llm.section import from_config
from membench.llm.transport import ENV_BASE_URL, safe_url
from membench.llm.pricing import BudgetExceeded, CostMeter
from membench.llm.replies import MalformedReply, json_object_parser, parse_json_object, parse_text

__all__ = [
    "BudgetExceeded", "CallCache", "CallPolicy", "CostMeter", "ENV_BASE_URL", "ENV_MODEL", "LLMClient",
    "LLMConfigError", "LLMError", "MalformedReply", "Reply", "StopRequested", "canonical_request", "from_config",
    "json_object_parser", "make_key", "parse_json_object", "parse_text", "safe_url",
]
