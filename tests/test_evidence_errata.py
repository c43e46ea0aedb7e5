"""Evidence errata: the shipped lists read as recorded on the real LoCoMo file, apply only where a file still reads
so, change nothing by default, and with `errata.evidence: apply` score the corrected evidence while the published
figures are scored beside them (a LongMemEval file built from the shared fragment, figures worked out by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from membench.benchmarks.registry import parse_dataset
from membench.config import validate_config
from membench.benchmarks.registry import benchmark
from membench.datasets.errata.evidence import apply_evidence_errata, load_evidence_errata
from membench.errors import InputError
from membench.report.evidence_errata import EvidenceErrataFiles, evidence_errata_section
from membench.stages import score

AUDIT = "https://github.com/dial481/locomo-audit/blob/ded8d0f08903d72b5a5eeda4fee5ced76126e7bc/audit/errors_conv_"


def _codes(data) -> dict[str, int]:
    return {n["code"]: n["count"] for n in data.log.as_list() if "erratum" in n["code"] or "errata" in n["code"]}


def _evidence(data, question_id: str, granularity: str = "turn") -> dict[str, float]:
    return {r["item_id"]: r["relevance"] for r in data.qrels
            if r["question_id"] == question_id and r["granularity"] == granularity}


def test_shipped_lists_name_their_public_sources():
    locomo = load_evidence_errata(benchmark("locomo").evidence_errata)
    assert len(locomo) == 38 and len({e.question_id for e in locomo}) == 38
    assert {e.granularity for e in locomo} == {"turn"}
    assert all(any(s.startswith(AUDIT) for s in e.sources) for e in locomo)
    by_id = {e.question_id: e for e in locomo}
    assert (by_id["conv-41_q10"].recorded, by_id["conv-41_q10"].corrected) == (("D7:1",), ("D7:5",))
    assert by_id["conv-41_q10"].sources[0] == "https://github.com/snap-research/locomo/issues/27"
    assert sum(e.question_id.startswith("conv-26_") for e in locomo) == 9
    (lme,) = load_evidence_errata(benchmark("longmemeval").evidence_errata)
    assert (lme.question_id, lme.granularity, lme.recorded, lme.corrected) == (
        "eac54add", "session", ("answer_0d4d0348_1", "answer_0d4d0348_2"), ("answer_0d4d0348_2",))
    assert lme.sources[0] == "https://github.com/xiaowu0162/LongMemEval/issues/37"


def test_by_default_the_evidence_stays_as_published(locomo_dir):
    data = parse_dataset("locomo", locomo_dir)
    before = [dict(r) for r in data.qrels]
    assert apply_evidence_errata(data, {"enabled": True, "evidence": "published"}, benchmark(data.kind).evidence_errata) == {"known": 38, "as_recorded": 38}
    assert data.qrels == before and data.evidence_errata == []
    assert _codes(data) == {"evidence_errata_not_applied": 38}


def test_apply_corrects_exactly_the_listed_questions(locomo_dir):
    data = parse_dataset("locomo", locomo_dir)
    before = [dict(r) for r in data.qrels]
    assert apply_evidence_errata(data, {"evidence": "apply"}, benchmark(data.kind).evidence_errata) == {"known": 38, "applied": 38}
    assert _codes(data) == {"evidence_erratum_applied": 38}
    assert _evidence(data, "conv-41_q10") == {"D7:5": 1.0}
    assert _evidence(data, "conv-26_q48") == {"D5:6": 1.0, "D5:8": 1.0, "D8:4": 1.0, "D12:4": 1.0}
    assert _evidence(data, "conv-43_q26") == {"D17:10": 1.0, "D26:36": 1.0}
    changed = {e.question_id for e in load_evidence_errata(benchmark("locomo").evidence_errata)}
    assert [r for r in data.qrels if r["question_id"] not in changed] == [
        r for r in before if r["question_id"] not in changed]
    # 2,820 evidence items before; the corrections add five net (e.g. conv-26_q48: 3 -> 4, conv-43_q26: 3 -> 2)
    assert (len(before), len(data.qrels)) == (2820, 2825)
    table = pd.DataFrame(data.evidence_errata)
    assert (table.evidence == "published").sum() == 79 and (table.evidence == "corrected").sum() == 84
    assert table[(table.question_id == "conv-41_q10")].set_index("evidence").item_id.to_dict() == {
        "published": "D7:1", "corrected": "D7:5"}


def test_only_where_the_file_still_reads_as_recorded(locomo_dir, tmp_path):
    """A copy of locomo10.json where one erratum is already fixed, one question's evidence and one question's text
    read otherwise, and conv-50 (three errata) is gone."""
    samples = json.loads((locomo_dir / "locomo10.json").read_text(encoding="utf-8"))
    by = {s["sample_id"]: s for s in samples}
    by["conv-26"]["qa"][1]["evidence"] = ["D1:14"]  # fixed upstream
    by["conv-26"]["qa"][70]["evidence"] = ["D17:19"]  # another version of the evidence
    by["conv-41"]["qa"][10]["question"] = "When did Maria first meet Jean?"  # another wording
    (tmp_path / "locomo10.json").write_text(json.dumps([s for s in samples if s["sample_id"] != "conv-50"]))
    data = parse_dataset("locomo", tmp_path)
    assert apply_evidence_errata(data, {"evidence": "apply"}, benchmark(data.kind).evidence_errata) == {
        "known": 38, "applied": 32, "already_corrected": 1, "not_applicable": 2, "question_absent": 3}
    assert _codes(data) == {"evidence_erratum_applied": 32, "evidence_erratum_already_corrected": 1,
                            "evidence_erratum_not_applicable": 2}
    assert _evidence(data, "conv-26_q70") == {"D17:19": 1.0} and _evidence(data, "conv-41_q10") == {"D7:1": 1.0}


def test_errata_off_checks_nothing(locomo_dir):
    data = parse_dataset("locomo", locomo_dir)
    before = [dict(r) for r in data.qrels]
    assert apply_evidence_errata(data, {"enabled": False, "evidence": "apply"}, benchmark(data.kind).evidence_errata) == {"known": 38}
    assert data.qrels == before and _codes(data) == {"evidence_errata_off": 38}


# --------------------------------------------------------------------------------------- LongMemEval, both ways

@pytest.fixture
def lme_file(longmemeval_dir, tmp_path) -> Path:
    """The shared fragment with its question 852ce960 standing in for eac54add: the same two answer sessions'
    ids as LongMemEval issue #37's question (each with one evidence user turn: turns 3 and 1)."""
    records = json.loads(next(longmemeval_dir.glob("*.json")).read_text(encoding="utf-8"))
    record = next(r for r in records if r["question_id"] == "852ce960")
    rename = {"answer_3a6f1e82_1": "answer_0d4d0348_1", "answer_3a6f1e82_2": "answer_0d4d0348_2"}
    record.update(question_id="eac54add", question="What was the significant buisiness milestone I mentioned four "
                  "weeks ago?", answer_session_ids=[rename[s] for s in record["answer_session_ids"]],
                  haystack_session_ids=[rename.get(s, s) for s in record["haystack_session_ids"]])
    path = tmp_path / "src" / "longmemeval_s_cleaned.json"
    path.parent.mkdir()
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_a_session_erratum_takes_its_evidence_turns_along(lme_file):
    data = parse_dataset("longmemeval", lme_file)
    assert _evidence(data, "eac54add", "session") == {"answer_0d4d0348_1": 1.0, "answer_0d4d0348_2": 1.0}
    assert _evidence(data, "eac54add") == {"answer_0d4d0348_1_3": 1.0, "answer_0d4d0348_2_1": 1.0}
    other = _evidence(data, "ba358f49")
    assert apply_evidence_errata(data, {"evidence": "apply"}, benchmark(data.kind).evidence_errata) == {"known": 1, "applied": 1}
    assert _evidence(data, "eac54add", "session") == {"answer_0d4d0348_2": 1.0}
    assert _evidence(data, "eac54add") == {"answer_0d4d0348_2_1": 1.0}
    assert _evidence(data, "ba358f49") == other
    table = pd.DataFrame(data.evidence_errata)
    assert table.groupby("evidence").size().to_dict() == {"corrected": 2, "published": 4}


def _session_run(data) -> pd.DataFrame:
    """Sessions ranked with each question's answer sessions placed by hand: eac54add's answer_0d4d0348_2 first and
    answer_0d4d0348_1 8th; ba358f49's two answer sessions first."""
    rows = []
    for qid in ("eac54add", "ba358f49"):
        ids = [t["session_key"] for t in data.haystacks if t["haystack_id"] == qid]
        session_of = {t["session_key"]: t["session_id"] for t in data.turns}
        sessions = list(dict.fromkeys(session_of[k] for k in ids))
        answers = sorted(s for s in sessions if s.startswith("answer_"))
        rest = [s for s in sessions if s not in answers]
        order = [answers[1], *rest[:6], answers[0], *rest[6:]] if qid == "eac54add" else [*answers, *rest]
        rows += [{"question_id": qid, "rank": i + 1, "item_id": s, "score": float(len(order) - i),
                  "granularity": "session"} for i, s in enumerate(order)]
    return pd.DataFrame(rows).astype({"question_id": "string", "item_id": "string", "granularity": "string"})


def _errata_files(results: Path) -> EvidenceErrataFiles:
    """The files the report rule declares for one dataset with evidence errata and one run, bm25."""
    return EvidenceErrataFiles(results / "evidence_errata.parquet",
                               {"bm25": (results / "scores" / "bm25.parquet", results / "scores-published" / "bm25.parquet")})


def test_apply_scores_the_correction_and_the_published_figure_beside_it(lme_file, tmp_path):
    """eac54add ranks answer_0d4d0348_2 first and answer_0d4d0348_1 8th. Corrected (only _2 is evidence):
    recall_all@5 = 1 and ndcg_any@10 = 1. As published (both): recall_all@5 = 0, and ndcg_any@10 = (1 + 1/log2 8) / 2
    = 2/3 (upstream's ideal DCG weighs ranks 1 and 2 alike). ba358f49 is 1.0 both ways, so the means move
    from 0.5 to 1.0 and from 5/6 to 1.0."""
    data = parse_dataset("longmemeval", lme_file)
    apply_evidence_errata(data, {"evidence": "apply"}, benchmark(data.kind).evidence_errata)
    results = tmp_path / "results" / "lme"
    data.write(results, {})
    (results / "runs").mkdir()
    _session_run(data).to_parquet(results / "runs" / "bm25.parquet")
    run = results / "runs" / "bm25.parquet"
    corrected = score.run(benchmark("longmemeval"), run, results, results / "scores" / "bm25.parquet")
    published = score.run_published(benchmark("longmemeval"), run, results, results / "scores-published" / "bm25.parquet")
    value = lambda df, q, m: float(df[(df.question_id == q) & (df.metric == m)].value.iloc[0])  # noqa: E731
    assert (value(corrected, "eac54add", "session/recall_all@5"), value(published, "eac54add", "session/recall_all@5"),
            value(published, "eac54add", "session/recall_all@10")) == (1.0, 0.0, 1.0)
    assert value(corrected, "eac54add", "session/ndcg_any@10") == 1.0
    assert value(published, "eac54add", "session/ndcg_any@10") == pytest.approx(2 / 3, abs=1e-12)
    assert set(published.question_id) == {"eac54add"}
    text = evidence_errata_section("lme", benchmark("longmemeval"), _errata_files(results))
    assert "1 known wrong evidence labels were corrected" in text
    assert "| bm25 | session/recall_all@5 | 0.5000 | 1.0000 | +0.5000 | 1 |" in text
    assert "| bm25 | session/ndcg_any@10 | 0.8333 | 1.0000 | +0.1667 | 1 |" in text
    assert "session/recall_any@5" not in text  # _2 is first either way: recall_any does not move
    assert ("| longmemeval-37 | eac54add | answer_0d4d0348_1, answer_0d4d0348_2 | answer_0d4d0348_2 | "
            "https://github.com/xiaowu0162/LongMemEval/issues/37 |") in text


def test_published_mode_scores_nothing_twice_and_shows_nothing(lme_file, tmp_path):
    data = parse_dataset("longmemeval", lme_file)
    assert apply_evidence_errata(data, {"evidence": "published"}, benchmark(data.kind).evidence_errata) == {"known": 1, "as_recorded": 1}
    results = tmp_path / "results" / "lme"
    data.write(results, {})
    (results / "runs").mkdir()
    _session_run(data).to_parquet(results / "runs" / "bm25.parquet")
    assert score.run_published(benchmark("longmemeval"), results / "runs" / "bm25.parquet", results,
                               results / "scores-published" / "bm25.parquet").empty
    assert evidence_errata_section("lme", benchmark("longmemeval"), _errata_files(results)) == ""


# --------------------------------------------------------------------------------------- files and config

GOOD = {"id": "x-1", "question_id": "q1", "question": "Q?", "granularity": "turn", "recorded": ["D1:1"],
        "corrected": ["D1:2"], "reason": "r", "sources": ["https://example.org/issue/1"]}


@pytest.mark.parametrize("entry, record, field, message", [
    ({**GOOD, "reason": ""}, "errata[1]", None, "missing reason"),
    ({**GOOD, "corrected": ["D1:1"]}, "errata[1]", "corrected", "'corrected' equals 'recorded'"),
    ({**GOOD, "recorded": "D1:1"}, "errata[1]", "recorded", "'recorded' must be a non-empty list of item ids"),
    ({**GOOD, "sources": ["http://example.org"]}, "errata[1]", "sources", "public https:// address"),
    ({**GOOD, "id": "x-0"}, "errata[1]", "id", "duplicate id 'x-0'"),
])
def test_a_bad_errata_file_names_the_file_entry_and_field(tmp_path, entry, record, field, message):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"errata": [{**GOOD, "id": "x-0"}, entry]}), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_evidence_errata(path)
    assert (err.value.path, err.value.record, err.value.field) == (str(path), record, field)
    assert message in err.value.detail


def test_errata_apply_is_short_for_evidence_apply():
    datasets = {"d": {"kind": "locomo", "path": "x"}}
    config = validate_config({"errata": "apply", "datasets": datasets})
    assert config["errata"] == {"evidence": "apply", "enabled": True, "path": None, "evidence_path": None}
    assert validate_config({"datasets": datasets})["errata"]["evidence"] == "published"
    with pytest.raises(InputError) as err:
        validate_config({"errata": {"evidence": "yes"}, "datasets": datasets})
    assert err.value.field == "errata.evidence"
