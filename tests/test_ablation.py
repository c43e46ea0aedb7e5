"""Ablation runs: each layer of bm25-v2 / bm25-time alone, their own Holm family."""

from __future__ import annotations

import yaml

from conftest import REPO
from membench.runs.ablation import ablation_runs
from membench.adapters.bm25_v2 import analyze
from membench.analysis.aggregate import aggregate
from membench.config import validate_config
from membench.runs.plan import adapter_runs
from test_aggregate import files  # noqa: F401  (fixture)


def _config(enabled: bool) -> dict:
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    config["ablation"] = {"enabled": enabled}
    return validate_config(config)


def test_runs_switch_one_layer_on():
    assert ablation_runs(_config(False)) == {}
    runs = adapter_runs(_config(True))
    assert runs["bm25-v2-stemming-only"] == {"adapter": "bm25-v2", "params": {
        "stemming": True, "bigrams": False, "synonyms": False, "morph_variants": False, "boost": 1.0, "dampen": 1.0}}
    assert runs["bm25-v2-dates-only"]["params"]["boost"] == 1.5 and not runs["bm25-v2-dates-only"]["params"]["stemming"]
    assert runs["bm25-time-window-only"] == {"adapter": "bm25-time", "params": {"recency_tiebreak": False}}
    assert runs["bm25-time-recency-only"]["params"] == {"boost": 1.0, "dampen": 1.0}
    assert {"bm25-v2-no-layers", "bm25-v2-bigrams-only", "bm25-v2-expansion-only"} <= set(runs)


def test_stemming_switch():
    assert analyze("the cooked cooking", bigrams=False, stemming=False) == ["cooked", "cooking"]
    assert analyze("the cooked cooking", bigrams=False) == ["cook", "cook"]


def test_ablation_runs_form_their_own_family(files):  # noqa: F811
    _, sig = aggregate(files, "base", resamples=200, headlines={"d": ["m1"]}, ablation=["b"])
    fams = sig[sig.split == "all"].groupby("family").family_size.first().to_dict()
    assert fams == {"d/all/headline": 1, "d/all/other": 2, "d/all/ablation-headline": 1, "d/all/ablation-other": 2}
