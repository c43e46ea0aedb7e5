"""A quick subset run end to end: its own folder, SUBSET RUN on the first line of every text output (bm25 on the
three datasets), and the ablation runs (cheap BM25 variants) with their table (on LoCoMo alone)."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import pdflatex_compiles, real_datasets, run_snakemake

pytestmark = pytest.mark.slow

OFF = ("bm25-upstream", "dense", "hybrid", "substring", "state-aware", "action-only")
SUBSET = "subset={per_group: 2, seed: 0}"


def subset_run(tmp_path, config: dict):
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = run_snakemake(tmp_path, tmp_path / "cfg.yaml", "--cores", "2", "results/report.md", "--config", SUBSET)
    assert done.returncode == 0, done.stderr[-4000:]
    assert not (tmp_path / "results").exists()  # a full run's folder is never touched
    return done, tmp_path / "subset" / "per_group-2_seed-0" / "results"


def test_subset_run_says_so_everywhere(tmp_path, locomo_dir, procedural_dir, longmemeval_dir, embedding_dir):
    config = {"resources_dir": str(tmp_path / "resources"), "embeddings_dir": str(embedding_dir),
              "datasets": real_datasets(longmemeval_dir, locomo_dir, procedural_dir),
              "adapters": {name: {"enabled": False} for name in (*OFF, "bm25-time", "bm25-v2")},
              "facts": {"source": "none"}}
    done, out = subset_run(tmp_path, config)
    first = lambda p: p.read_text(encoding="utf-8").splitlines()[0]  # noqa: E731
    assert first(out / "report.md").startswith("# membench report — SUBSET RUN (2 questions per question group")
    assert json.loads((out / "summary.json").read_text())["subset"].startswith("SUBSET RUN")
    assert first(out / "summary.json").startswith('{"subset": "SUBSET RUN')
    assert first(out / "headline.txt").startswith("SUBSET RUN")
    assert "SUBSET RUN" in done.stdout + done.stderr  # the headline table printed on success
    # the results explorer shows the same line above its title (data/index.js carries it)
    assert json.dumps(json.loads((out / "summary.json").read_text())["subset"]) in (
        out / "explorer" / "data" / "index.js").read_text(encoding="utf-8")
    for dataset, n in (("locomo", 10), ("procedural", 6), ("lme-fragment", 2)):
        assert first(out / "tables" / f"{dataset}.tex").startswith("% SUBSET RUN")
        assert first(out / dataset / "per_question.csv").startswith("# SUBSET RUN")
        summary = json.loads((out / "summary.json").read_text())["datasets"][dataset]["adapters"]["bm25"]["all"]
        assert {cell["n"] for cell in summary.values()} <= {n}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| subset | dropped | 1,976 |" in report
    assert "Resampling unit: conversations" in report and "#### Where adapters miss" in report
    pdflatex_compiles(sorted((out / "tables").glob("*.tex")), tmp_path)


def test_ablation_runs_and_their_table_on_a_subset(tmp_path, locomo_dir, embedding_dir):
    config = {"resources_dir": str(tmp_path / "resources"), "embeddings_dir": str(embedding_dir),
              "datasets": {"longmemeval-s": {"kind": "longmemeval", "enabled": False},
                           "procedural": {"kind": "procedural", "enabled": False},
                           "locomo": {"kind": "locomo", "path": str(locomo_dir)}},
              "adapters": {name: {"enabled": False} for name in OFF}, "facts": {"source": "none"},
              "ablation": {"enabled": True}}
    _, out = subset_run(tmp_path, config)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "#### Ablation: one layer at a time against `bm25`" in report and "| bm25-v2 (all layers) |" in report
    runs = {p.stem for p in (out / "locomo" / "runs").glob("*.parquet")}
    assert runs == {"bm25", "bm25-time", "bm25-v2", "bm25-v2-no-layers", "bm25-v2-stemming-only",
                    "bm25-v2-bigrams-only", "bm25-v2-expansion-only", "bm25-v2-dates-only", "bm25-time-window-only",
                    "bm25-time-recency-only"}
