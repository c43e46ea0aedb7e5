"""Opt-in model calls: one cached, retrying, metered OpenAI-compatible client.

The package imports nothing itself: a stage imports the module it needs, so one that reads only the prompt files
(`membench.llm.prompts`: aggregation, the report) does not pay ~1 s for openai, and each rule's code version
(its script's static import closure) names exactly the modules it runs. Typical stage code::

    from membench.llm.pricing import BudgetExceeded
    from membench.llm.replies import json_object_parser
    from membench.llm.section import from_config

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
