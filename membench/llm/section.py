"""The ``llm:`` config section -> a ready client: the section's checks and defaults (the schema's), its per-stage
overrides, the environment variables that win over it, the call policy, the price table (``llm.prices``, else
genai-prices') and budget, and the call cache it opens."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from membench.config import config_section, section_keys
from membench.errors import InputError
from membench.llm.cache import CallCache
from membench.llm.client import ENV_MODEL, LLMClient
from membench.llm.local_server import LOCAL_MODEL, local_base_url
from membench.llm.policy import CallPolicy
from membench.llm.pricing import CostMeter
from membench.llm.transport import ENV_BASE_URL

POLICY_FIELDS = frozenset(f.name for f in dataclasses.fields(CallPolicy))


def from_config(cfg: Mapping[str, Any], cache_path: str | os.PathLike, stage: str = "default", *,
                meter: CostMeter | None = None, env: Mapping[str, str] | None = None,
                config_path: str = "config", **overrides) -> LLMClient:
    """Build a client from the ``llm:`` config section.

    ``cfg`` is the whole config (with an ``llm`` key) or the ``llm`` section itself. Its keys, checks and
    defaults are those of ``membench/config.schema.yaml`` (``llm:``, e.g. its ``budget_usd``), applied
    here to the section merged with its ``stages.<stage>`` overrides, so a config passed directly reads as
    the validated one. ``$MEMBENCH_LLM_MODEL`` / ``$MEMBENCH_LLM_BASE_URL`` win over ``model`` / ``base_url``.

    The call policy is :meth:`CallPolicy.from_section` of the merged section. The cache at ``cache_path`` is opened
    here and closed with the client. ``overrides`` that name a :class:`CallPolicy` field change the policy (e.g.
    ``retry_failed=False``); the others go straight to :class:`LLMClient` (e.g. ``sleep=`` in tests).
    """
    env = os.environ if env is None else env
    section = cfg.get("llm", cfg) if isinstance(cfg, Mapping) else None
    if not isinstance(section, Mapping):
        raise InputError(config_path, "the llm section must be a mapping", field="llm")
    section = dict(section)
    stage_over = (section.pop("stages", None) or {}).get(stage) or {}
    if not isinstance(stage_over, Mapping):
        raise InputError(config_path, "must be a mapping", field=f"llm.stages.{stage}")
    section.update(stage_over)
    for k in sorted(set(section) - section_keys("llm")):
        if "budget" in k or "price" in k or "key" in k:
            raise InputError(config_path, f"unknown key '{k}' (did you mean one of budget_usd, prices, "
                                          f"api_key_env?); keys are never put in config, only their variable name",
                             field=f"llm.{k}")
    section = config_section(None, "llm", config_path, section=section)

    model = env.get(ENV_MODEL) or section["model"]
    if not model:
        raise InputError(config_path, f"no model: set llm.model or ${ENV_MODEL}", field="llm.model")
    base_url = env.get(ENV_BASE_URL) or section["base_url"] or None
    prices, budget = section["prices"], section["budget_usd"]
    if section["provider"] == "local":  # membench's own llama.cpp server (membench.llm.local_server)
        model, base_url = LOCAL_MODEL, local_base_url(section["local"])
        prices = {LOCAL_MODEL: {"input_per_1m": 0.0, "output_per_1m": 0.0}, **prices}
        overrides.setdefault("json_mode", True)
    if meter is None:
        try:
            meter = CostMeter(prices, budget, api_url=base_url)  # llm.prices first, then genai-prices' table
        except ValueError as exc:
            raise InputError(config_path, str(exc), field="llm.prices") from None
    if budget is not None and not meter.is_priced(model):
        raise InputError(config_path, f"a budget needs a price for model {model!r}; add it to llm.prices",
                         field="llm.prices")

    policy = CallPolicy.from_section(section, config_path,
                                     **{k: overrides.pop(k) for k in POLICY_FIELDS & set(overrides)})
    cache = CallCache(cache_path)
    try:
        return LLMClient(model, base_url, api_key_env=section["api_key_env"], cache=cache, meter=meter, policy=policy,
                         stage=stage, owns_cache=True, **overrides)
    except BaseException:
        cache.close()
        raise
