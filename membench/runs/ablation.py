"""Ablation runs: each layer of `bm25-v2` and of `bm25-time` switched on alone (`ablation.enabled: true`).

`bm25-v2` with every layer off is BM25 over stopword-free, unstemmed words; each `-only` run turns one
layer back on. `bm25-v2` and `bm25-time` themselves are the "all together" rows. Every run is compared with
the baseline (`bm25`) in its own Holm family.
"""

from __future__ import annotations

from typing import Any

V2_OFF = {"stemming": False, "bigrams": False, "synonyms": False, "morph_variants": False, "boost": 1.0,
          "dampen": 1.0}
V2_LAYERS = {"stemming": {"stemming": True}, "bigrams": {"bigrams": True},
             "expansion": {"synonyms": True, "morph_variants": True}, "dates": {"boost": 1.5, "dampen": 0.75}}
TIME_LAYERS = {"window": {"recency_tiebreak": False}, "recency": {"boost": 1.0, "dampen": 1.0}}

# run name -> (adapter, params, the full run it ablates)
ABLATION_RUNS: dict[str, tuple[str, dict[str, Any], str]] = {
    "bm25-v2-no-layers": ("bm25-v2", dict(V2_OFF), "bm25-v2"),
    **{f"bm25-v2-{layer}-only": ("bm25-v2", {**V2_OFF, **on}, "bm25-v2") for layer, on in V2_LAYERS.items()},
    **{f"bm25-time-{layer}-only": ("bm25-time", dict(params), "bm25-time") for layer, params in TIME_LAYERS.items()},
}


def ablation_runs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ablation runs the config asks for (none unless `ablation.enabled`), in adapter-run form."""
    if not config.get("ablation", {}).get("enabled"):
        return {}
    return {name: {"adapter": adapter, "params": params} for name, (adapter, params, _) in ABLATION_RUNS.items()}


def ablated(config: dict[str, Any]) -> list[str]:
    """Names of the ablation runs of this config (the report sets them apart from the main tables)."""
    return list(ablation_runs(config))
