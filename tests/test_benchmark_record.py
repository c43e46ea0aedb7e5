"""A benchmark is one record (membench.benchmarks): the README's tiny `notes` kind (tests/example_benchmark.py),
registered with one call, goes through the real parse, ingest, rank (bm25) and score stages, and the plan,
config check and aggregate read its record too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import example_benchmark
from membench.analysis.aggregate import resampling_for
from membench.benchmarks.registry import BENCHMARKS, benchmark, kinds, register
from membench.config import validate_config
from membench.errors import InputError
from membench.stages.ingest import ingest
from membench.stages import parse, rank, score
from membench.runs.plan import runs_for
from membench.runs.request import RunFiles, RunRequest

ROOT = Path(__file__).resolve().parents[1]
NOTES = {
    "notes": [{"id": "n1", "text": "Adopted a grey cat called Miso."},
              {"id": "n2", "text": "My sister moved to Lisbon."},
              {"id": "n3", "text": "Dentist appointment on Friday."},
              {"id": "n4", "text": "Bought running shoes for the marathon."}],
    "questions": [{"id": "q1", "text": "cat Miso", "relevant": ["n1"]},
                  {"id": "q2", "text": "sister Lisbon dentist", "relevant": ["n3"]},
                  {"id": "q3", "text": "marathon shoes", "relevant": ["n4", "n2"]}],
}


@pytest.fixture
def notes_kind():
    """The example kind, registered for one test (the registry is process-wide)."""
    yield register(example_benchmark.BENCHMARK)
    BENCHMARKS.pop("notes")


def write_notes(folder: Path, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def test_the_readme_shows_the_example_kind():
    """The README's record is the one the tests run, word for word."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Adding a benchmark"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    source = (ROOT / "tests" / "example_benchmark.py").read_text(encoding="utf-8")
    record = block[block.index("BENCHMARK = "):block.index("register(BENCHMARK)")]
    assert record.strip().endswith(")") and record in source


def test_a_registered_kind_is_parsed_ranked_and_scored(notes_kind, tmp_path):
    folder = tmp_path / "notes"
    counts = parse.run(benchmark("notes"), write_notes(tmp_path / "src", NOTES), folder)
    assert counts == {"notes": 4, "questions": 3}
    ingest(folder, folder)
    run = rank.run(RunRequest("bm25", "bm25", {}, benchmark("notes"), 3, folder),
                   RunFiles(tmp_path / "bm25.parquet", tmp_path / "bm25.trec", tmp_path / "bm25.json"))
    # bm25 on 4 notes: q1 matches n1 only (ties after it by position); q2 matches n2 on two words, n3 on one;
    # q3 matches n4 only. Depth 3 (notes is not ranked in full).
    top = {q: list(g.item_id) for q, g in run.groupby("question_id")}
    assert top == {"q1": ["n1", "n2", "n3"], "q2": ["n2", "n3", "n1"], "q3": ["n4", "n1", "n2"]}
    assert json.loads((tmp_path / "bm25.json").read_text())["depth"] == 3
    scores = score.run(benchmark("notes"), tmp_path / "bm25.parquet", folder, tmp_path / "scores.parquet")
    values = scores.pivot(index="question_id", columns="metric", values="value")
    # hit@1: n1 first for q1, n2 (not n3) first for q2, n4 first for q3; recall@2: q3 has n4 but not n2 in its top 2
    assert values.to_dict() == {"hit@1": {"q1": 1.0, "q2": 0.0, "q3": 1.0},
                                "recall@2": {"q1": 1.0, "q2": 1.0, "q3": 0.5}}
    assert list(scores.split.drop_duplicates()) == ["tune", "holdout"]


def test_the_plan_config_and_aggregate_read_the_record(notes_kind):
    config = {"datasets": {"mine": {"kind": "notes", "path": "/data/notes.json"}},
              "adapters": {"bm25": {}, "state-aware": {}}, "baseline": "bm25"}
    validated = validate_config(config)
    assert "notes" in kinds() and benchmark("notes") is notes_kind
    runs = {"bm25": {"adapter": "bm25"}, "state-aware": {"adapter": "state-aware"}}
    assert runs_for(validated, ["mine"], runs) == [("mine", "bm25")]  # state-aware ranks trajectories only
    assert resampling_for(benchmark("notes"), pd.DataFrame({"question_id": ["q1"], "haystack_id": ["notes"]})).unit == "question"


def test_unknown_kinds_and_clashing_records_are_refused(notes_kind, tmp_path):
    with pytest.raises(InputError, match=r"datasets.mine.kind.*unknown benchmark kind 'nots'; known: beam, locomo, "
                                         r"locomo-plus, longmemeval, notes, procedural"):
        validate_config({"datasets": {"mine": {"kind": "nots", "path": "x"}}})
    with pytest.raises(ValueError, match="'notes' is already registered with another record"):
        register(example_benchmark.BENCHMARK.__class__(**{**vars(example_benchmark.BENCHMARK), "curve": "hit"}))
    bad = {**NOTES, "questions": [{"id": "q1", "text": "cat", "relevant": ["n9"]}]}
    with pytest.raises(InputError, match=r"questions\[0\].*relevant note 'n9' is not among the notes"):
        parse.run(benchmark("notes"), write_notes(tmp_path / "bad", bad), tmp_path / "out")
    assert not (tmp_path / "out").exists()
