"""The plan's own config checks: a config that would rank nothing, or names a run that is not there, is an
error naming the field, never a run that ends with an empty report; and the datasets a run's targets need."""

from __future__ import annotations

import pytest
import yaml

from conftest import REPO
from membench.config import enabled_datasets, validate_config
from membench.errors import InputError
from membench.runs.plan import adapter_runs, baseline_runs, needs_of_runs, requested_datasets, runs_for

BUILT_INS = ("bm25", "bm25-upstream", "bm25-time", "bm25-v2", "dense", "hybrid", "substring", "state-aware",
             "action-only")


def config(datasets: dict | None = None, adapters: dict | None = None, **rest) -> dict:
    base = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    for name, spec in (datasets or {}).items():
        base["datasets"][name] = {**base["datasets"].get(name, {}), **spec}
    for name, spec in (adapters or {}).items():
        base["adapters"][name] = {**base["adapters"].get(name, {}), **spec}
    return validate_config({**base, **rest})


def plan(cfg: dict) -> list[tuple[str, str]]:
    return runs_for(cfg, enabled_datasets(cfg), adapter_runs(cfg))


def test_every_dataset_disabled():
    cfg = config({d: {"enabled": False} for d in ("longmemeval-s", "locomo", "procedural")})
    with pytest.raises(InputError, match=r"field 'datasets': every dataset is disabled .*nothing to run"):
        plan(cfg)


def test_every_adapter_disabled():
    cfg = config(adapters={a: {"enabled": False} for a in BUILT_INS})
    with pytest.raises(InputError, match=r"field 'adapters': every adapter run is disabled .*nothing to rank"):
        plan(cfg)


def test_no_enabled_run_ranks_an_enabled_dataset():
    """The Procedural baselines rank trajectories only: on LoCoMo alone they have nothing to rank."""
    cfg = config({"longmemeval-s": {"enabled": False}, "procedural": {"enabled": False}},
                 {a: {"enabled": False} for a in BUILT_INS if a not in ("state-aware", "action-only")},
                 baseline="state-aware", facts={"source": "none"})
    with pytest.raises(InputError) as err:
        plan(cfg)
    assert err.value.field == "adapters"
    assert err.value.detail == ("none of the enabled adapter runs (state-aware, action-only) ranks what the enabled "
                                "datasets (locomo) are scored at: there is nothing to rank")


def test_references_to_missing_runs_name_their_field():
    with pytest.raises(InputError, match=r"field 'baseline': the baseline adapter 'nope' is not among"):
        plan(config(baseline="nope"))
    with pytest.raises(InputError, match=r"field 'facts.adapters': names 'nope', which is not an enabled"):
        plan(config(facts={"adapters": ["nope"]}))


def test_the_shipped_config_plans_every_pair():
    pairs = plan(config())
    # 7 adapters on all 3 datasets, the 2 Procedural baselines, bm25+facts and dense+facts on LoCoMo (its facts)
    assert len(pairs) == 7 * 3 + 2 + 2


@pytest.mark.parametrize("targets, wanted", [
    ([], ["lme", "locomo", "procedural"]),  # the default target: the report
    (["results/report.md"], ["lme", "locomo", "procedural"]),
    (["all"], ["lme", "locomo", "procedural"]),  # a rule's name
    (["results/locomo/scores/dense.parquet"], ["locomo"]),
    (["results/procedural/runs/bm25.trec", "results/locomo/questions.parquet"], ["locomo", "procedural"]),
    (["results/locomo/scores/dense.parquet", "results/summary.parquet"], ["lme", "locomo", "procedural"]),
    (["results/longmemeval-s/questions.parquet"], ["lme", "locomo", "procedural"]),  # not an enabled dataset
    (["results/locomo/../procedural/questions.parquet"], ["procedural"]),
])
def test_requested_datasets(targets, wanted):
    assert requested_datasets(targets, ["lme", "locomo", "procedural"]) == wanted


def test_the_qa_baselines_have_names_of_their_own():
    """qa.full_context / no_memory / oracle answer under the run names `full-context`, `no-memory`, `oracle` on each
    dataset with QA runs; no configured run may take those names."""
    with pytest.raises(InputError, match=r"field 'adapters.full-context': the run name 'full-context' is the QA "
                                         r"baseline's \(qa.full_context\); name the run otherwise"):
        adapter_runs({"adapters": {"bm25": {}, "full-context": {"adapter": "dense"}}})
    with pytest.raises(InputError, match=r"the run name 'oracle' is the QA baseline's \(qa.oracle\)"):
        adapter_runs({"adapters": {"oracle": {"adapter": "dense"}}})
    answered = [("locomo", "bm25"), ("locomo", "dense"), ("lme", "bm25")]
    every = {"full_context": True, "no_memory": True, "oracle": True}
    assert baseline_runs({"qa": every}, answered) == [
        ("locomo", "full-context"), ("locomo", "no-memory"), ("locomo", "oracle"),
        ("lme", "full-context"), ("lme", "no-memory"), ("lme", "oracle")]
    assert baseline_runs({"qa": {**every, "full_context": False}}, answered) == [
        ("locomo", "no-memory"), ("locomo", "oracle"), ("lme", "no-memory"), ("lme", "oracle")]
    assert baseline_runs({"qa": dict.fromkeys(every, False)}, answered) == []


def test_refs_withheld_is_for_memory_systems_only():
    """An adapter ranks items and returns no refs: withholding them would silently change nothing."""
    with pytest.raises(InputError, match=r"field 'adapters.bm25.refs': refs: withheld applies to memory systems "
                                         r"only; 'bm25' is an adapter"):
        needs_of_runs(adapter_runs(config(adapters={"bm25": {"refs": "withheld"}})))
    runs = adapter_runs(config(adapters={"log": {"adapter": "session-log", "refs": "withheld"}}))
    assert runs["log"]["refs"] == "withheld" and runs["bm25"]["refs"] == "kept"
    assert needs_of_runs(runs)["log"].session_logs
    with pytest.raises(InputError, match=r"refs"):
        config(adapters={"log": {"adapter": "session-log", "refs": "hidden"}})  # the schema's enum
