"""Same figures however the vectors were computed (issue 23's done-when): dense and hybrid runs on real LoCoMo (two
conversations) give byte-identical ranked lists and the same summary.json figures with 1 or 3 embed shards, batches
of 64 or 7, 1 or 2 threads, and an embedding cache that was empty or filled first by a subset run; `membench
compare` says so (exit 0) and names a figure that was changed.

This rests on the pinned numeric profile (membench.embedding.numerics): under it a text's vector is the same bits whatever
its batch and thread count, which no library promises in general, so this is the test that checks it on the
machine at hand, and the cosine is summed in a fixed order (membench.embedding.similarity). Each configuration embeds into a
fresh cache (a shared one would hand every run the same vectors and prove nothing); the CIs use 200 resamples and
the target is summary.json, not the report, to keep each run to seconds of work beyond its embedding."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import locomo_slice, run_snakemake
from membench import cli
from membench.embedding import numerics
from membench.machine.cpu import this_cpu
from membench.embedding.cache import EmbeddingCache
from membench.io import sha256_file

pytestmark = [pytest.mark.slow, pytest.mark.data]

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
RUN_FILES = [f"locomo/runs/{a}.{ext}" for a in ("dense", "hybrid") for ext in ("parquet", "trec")]
SUBSET = "subset={per_group: 3, seed: 0}"
# OpenMP threads that sleep instead of spinning while they wait: two threads then cost the CPU time of one (not
# 2-5x, on two busy cores), and the arithmetic is the same.
PASSIVE = {"OMP_WAIT_POLICY": "PASSIVE"}


def run(work: Path, data: Path, cache: Path, shards: int = 1, batch: int = 64, threads: int = 1,
        *extra: str) -> Path:
    """One workflow run (dense and hybrid on the LoCoMo slice) in `work`; returns its results folder."""
    config = {"resources_dir": str(work / "resources"), "embeddings_dir": str(cache),
              "datasets": {"longmemeval-s": {"kind": "longmemeval", "enabled": False},
                           "procedural": {"kind": "procedural", "enabled": False},
                           "locomo": {"kind": "locomo", "path": str(data)}},
              "adapters": {name: {"enabled": name in ("dense", "hybrid")} for name in
                           ("bm25", "bm25-upstream", "bm25-time", "bm25-v2", "dense", "hybrid", "substring",
                            "state-aware", "action-only")},
              "baseline": "dense", "facts": {"source": "none"}, "report": {"bootstrap_resamples": 200},
              "embedding": {"shards": shards, "batch_size": batch}}
    work.mkdir(parents=True, exist_ok=True)
    (work / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(work, work / "cfg.yaml", "results/summary.json", "--cores", "2", *extra,
                         "--set-threads", f"embed={threads}", env={"OMP_NUM_THREADS": str(threads), **PASSIVE})
    assert done.returncode == 0, done.stderr[-4000:]
    return work / "results"


def manifests(results: Path) -> list[dict]:
    """The embed shards' manifests of a run (one set of shards per scope of datasets: `embeddings/<scope>/shard-i.json`)."""
    return [json.loads(p.read_text())["models"][MODEL] for p in sorted((results / "embeddings").glob("*/shard-*.json"))]


COLD, FILLED = "cold cache, 3 shards, batch 7, 2 threads", "cache filled by a subset run, 1 shard, batch 64, 1 thread"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, locomo_dir):
    """Two runs that differ in all four at once (each pair of values is covered, at the cost of two cold embeddings
    rather than five): a cold cache embedded in 3 shards, batches of 7, 2 threads; and a cache that a subset run
    filled first (all documents, 15 of the questions), then 1 shard, batches of 64, 1 thread for the rest."""
    base = tmp_path_factory.mktemp("same-figures")
    data = locomo_slice(locomo_dir, base / "locomo")
    cold = run(base / "cold", data, base / "cache-cold", 3, 7, 2)
    run(base / "filled", data, base / "cache-filled", 1, 64, 1, "--config", SUBSET)
    return {COLD: cold, FILLED: run(base / "filled", data, base / "cache-filled")}


def test_ranked_lists_are_byte_identical(runs):
    for path in RUN_FILES:
        assert (runs[COLD] / path).read_bytes() == (runs[FILLED] / path).read_bytes(), path
    assert pd.read_parquet(runs[COLD] / "locomo/runs/dense.parquet").question_id.nunique() == 304


def test_each_configuration_embedded_what_it_claims(runs):
    """Otherwise the test could pass by accident: the cold run embedded every text itself, in 3 shards with 2
    threads; the filled run took the subset run's vectors for most texts and embedded only the rest, with 1."""
    cold, filled = manifests(runs[COLD]), manifests(runs[FILLED])
    total = filled[0]["texts"]
    assert len(cold) == 3 and all(m["embedded"] == m["texts"] > 0 for m in cold) and sum(m["texts"] for m in cold) == total
    assert {m["environment"]["torch"]["threads"] for m in cold} == {2}
    assert 0 < filled[0]["embedded"] < total and filled[0]["cached"] == total - filled[0]["embedded"]
    assert filled[0]["environment"]["torch"]["threads"] == 1


def test_compare_finds_the_same_figures_and_names_what_differs(runs, capsys):
    assert cli.main(["compare", str(runs[FILLED]), str(runs[COLD])]) == 0
    out = capsys.readouterr().out
    assert "figures: 0 of 80 differ" in out and "run and score files: 6 byte-identical, 0 differ" in out
    assert "config.embedding.batch_size: 64 vs 7" in out and "config.embedding.shards: 1 vs 3" in out
    assert f"environment.embedding.{MODEL}.torch.threads: 1 vs 2" in out  # the environment difference, shown


def test_summary_json_carries_the_environment_and_provenance(runs):
    summary = json.loads((runs[COLD] / "summary.json").read_text(encoding="utf-8"))
    env = summary["environment"]
    assert env["machine"]["cpu"] == this_cpu().model and env["machine"]["vector_extensions"] == this_cpu().vector_extensions
    embedding = env["embedding"][MODEL]
    assert embedding["numeric_tag"] == EmbeddingCache(None).numeric_tag and len(embedding["model_revision"]) == 16
    if numerics.is_pinned():
        assert embedding["torch"]["numeric_path"]["aten"] == "AVX2"
        assert embedding["torch"]["numeric_path"]["mkl_cbwr"] in ("AVX2,STRICT", "AUTO,STRICT")
    assert env["packages"]["torch"] == embedding["numeric_tag"].split(",")[0].removeprefix("torch-")
    provenance = summary["provenance"]
    assert provenance["data"] == {"locomo": {"locomo10.json": sha256_file(runs[COLD].parent.parent / "locomo" / "locomo10.json")}}
    assert provenance["config"]["embedding"] == {"shards": 3, "batch_size": 7, "backend": "torch", "device": "cpu",
                                                 "precision": "float32"}
    assert provenance["code"]["membench"] == "0.1.0" and provenance["code"]["commit"]


def test_compare_names_a_changed_figure(runs, tmp_path, capsys):
    changed = tmp_path / "results"
    shutil.copytree(runs[FILLED], changed)
    table = pd.read_parquet(changed / "summary.parquet")
    row = ((table.dataset == "locomo") & (table.adapter == "hybrid") & (table.split == "all")
           & (table.group_by == "all") & (table.metric == "evidence_recall@10"))
    assert row.sum() == 1
    table.loc[row, "mean"] += 0.001
    table.to_parquet(changed / "summary.parquet", index=False)
    assert cli.main(["compare", str(runs[FILLED]), str(changed)]) == 1
    out = capsys.readouterr().out
    assert f"figures: 1 of {len(table)} differ" in out
    assert "  locomo | hybrid | all | evidence_recall@10: mean " in out and "(+0.001000)" in out
    assert cli.main(["compare", "--tolerance", "0.002", str(runs[FILLED]), str(changed)]) == 0
