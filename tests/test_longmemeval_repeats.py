"""A LongMemEval haystack that lists one session twice (the cleaned LongMemEval-S file does so in 13 questions,
upstream issue #54): each listing is a corpus entry of its own, as upstream's run_retrieval.py builds its corpus,
and every per-question figure of bm25-upstream equals the upstream protocol's, recomputed here from the file."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pandas as pd
import pytest
from rank_bm25 import BM25Okapi

from membench.benchmarks.registry import benchmark
from membench.runs.registry import load_adapter
from membench.benchmarks.registry import parse_dataset
from membench.errors import InputError
from membench.benchmarks.longmemeval import scoring as scorer
from membench.scoring.tables import Gold
from membench.stages.ingest import ingest
from membench.stages.rank import rank_dataset
from upstream_longmemeval import upstream_corpus, upstream_figures, upstream_ranking

REPEATED = 13  # questions whose haystack lists a session again, as in the cleaned LongMemEval-S file
KS = (1, 3, 5, 10, 30, 50)


def with_repeats(fragment: list[dict], n_questions: int = 16, seed: int = 7) -> list[dict]:
    """`n_questions` questions built from the real fragment's two; the first 13 list one session again at
    another position and with another date (one of them a third time, one an evidence session). From the fourth
    on, the session listed again is the filler BM25 ranks first, so both listings meet near the top of the
    ranking, where counting them as one session or two changes turn2session's widened k."""
    rng = random.Random(seed)
    out = []
    for i in range(n_questions):
        entry = copy.deepcopy(fragment[i % 2])
        entry["question_id"] = f"{entry['question_id']}-r{i}"
        if i < REPEATED:
            fillers = [p for p, sid in enumerate(entry["haystack_session_ids"])
                       if sid not in entry["answer_session_ids"]]
            source = (entry["haystack_session_ids"].index(entry["answer_session_ids"][0]) if i == 1
                      else rng.choice(fillers) if i < 3 else top_filler(entry, fillers))
            for _ in range(3 if i == 0 else 2 if i == 2 else 1):
                at = rng.randrange(len(entry["haystack_session_ids"]) + 1)
                date = entry["haystack_dates"][min(at, len(entry["haystack_dates"]) - 1)]
                for key, value in (("haystack_session_ids", entry["haystack_session_ids"][source]),
                                   ("haystack_sessions", copy.deepcopy(entry["haystack_sessions"][source])),
                                   ("haystack_dates", date)):
                    entry[key].insert(at, value)
                source += at <= source
        out.append(entry)
    return out


def top_filler(entry: dict, fillers: list[int]) -> int:
    corpus, _ = upstream_corpus(entry, "session")
    scores = BM25Okapi([doc.split(" ") for doc in corpus]).get_scores(entry["question"].split(" "))
    return max(fillers, key=lambda p: scores[p])


@pytest.fixture(scope="module")
def repeated_file(longmemeval_dir, tmp_path_factory):
    fragment = json.loads((longmemeval_dir / "longmemeval_s_cleaned_partial_2q.json").read_text(encoding="utf-8"))
    folder = tmp_path_factory.mktemp("lme-repeats")
    entries = with_repeats(fragment)
    (folder / "longmemeval_s_repeats.json").write_text(json.dumps(entries), encoding="utf-8")
    return folder, entries


@pytest.fixture(scope="module")
def scored(repeated_file):
    folder, _ = repeated_file
    data = parse_dataset("longmemeval", folder)
    data.write(folder, {})
    ingest(folder, folder)
    run = rank_dataset(benchmark("longmemeval"), folder, load_adapter("bm25-upstream"), depth=10)
    scores = scorer.score(run, Gold.load(folder))
    return data, folder, run, {(r.question_id, r.metric): r.value for r in scores.itertuples()}


def test_every_repeat_is_counted_and_kept(repeated_file, scored):
    _, entries = repeated_file
    data, folder, run, _ = scored
    assert data.counts["questions_with_repeated_sessions"] == REPEATED
    assert data.log.count("repeated_haystack_session") == REPEATED
    haystacks = pd.read_parquet(folder / "haystacks.parquet")
    turns = pd.read_parquet(folder / "turns.parquet").drop_duplicates("session_key").set_index("session_key")
    for entry in entries:
        listed = haystacks[haystacks.haystack_id == entry["question_id"]].sort_values("position")
        assert len(listed) == len(entry["haystack_session_ids"])  # one session per listing
        assert listed.session_key.is_unique
        # each listing lands at its own date, in the haystack's order
        expected_dates = [d for d in entry["haystack_dates"]]
        got = [turns.at[k, "session_date"] for k in listed.session_key]
        from membench.benchmarks.longmemeval.dates import longmemeval_date
        assert got == [longmemeval_date(d) for d in expected_dates]
        for granularity in ("session", "turn"):
            ours = run[(run.question_id == entry["question_id"]) & (run.granularity == granularity)]
            assert ours.item_id.is_unique  # the run (and its TREC file) names each listing apart


def test_report_and_summary_json_count_the_questions(scored, tmp_path):
    from membench.report.artifacts import summary_json
    from membench.report.datasets import dataset_section

    _, folder, _, _ = scored
    info = json.loads((folder / "normalization.json").read_text(encoding="utf-8"))
    assert "| questions_with_repeated_sessions | 13 |" in dataset_section("lme-repeats", folder / "normalization.json")
    summary = pd.DataFrame(columns=["dataset", "adapter", "split", "group_by", "group", "metric", "mean", "ci_lo",
                                    "ci_hi", "n", "n_skipped", "unit"])
    text = summary_json(summary, {"lme-repeats": benchmark("longmemeval")}, None, None, {"lme-repeats": info["counts"]})
    assert json.loads(text)["datasets"]["lme-repeats"]["data_counts"]["questions_with_repeated_sessions"] == 13


@pytest.mark.parametrize("granularity", ["session", "turn"])
def test_rankings_are_upstreams(repeated_file, scored, granularity):
    _, entries = repeated_file
    _, _, run, _ = scored
    from membench.benchmarks.longmemeval.parse import listed_id

    for entry in entries:
        ranked, ids = upstream_ranking(entry, granularity)
        expected = [i.replace("noans", "answer") for i in ranked]
        ours = run[(run.question_id == entry["question_id"]) & (run.granularity == granularity)].sort_values("rank")
        assert [listed_id(i) for i in ours.item_id] == expected
        assert len(ours) == len(ids)  # every listing is ranked


def test_figures_equal_the_upstream_protocol(repeated_file, scored):
    """Every metric of every question, from an independent statement of upstream's corpus and formulas."""
    _, entries = repeated_file
    *_, ours = scored
    checked = 0
    for entry in entries:
        for name, value in upstream_figures(entry).items():
            assert ours[(entry["question_id"], name)] == pytest.approx(value, abs=1e-12), (entry["question_id"], name)
            checked += 1
    assert checked == 16 * len(KS) * 3 * 3


def test_a_repeated_evidence_session_is_two_relevant_entries(repeated_file, scored):
    """Question 1 lists an evidence session twice: upstream's ideal DCG counts both entries."""
    _, entries = repeated_file
    data, *_ = scored
    qid = entries[1]["question_id"]
    session_qrels = [r["item_id"] for r in data.qrels if r["question_id"] == qid and r["granularity"] == "session"]
    sid = entries[1]["answer_session_ids"][0]
    assert sorted(session_qrels) == sorted([*entries[1]["answer_session_ids"], f"{sid}#2"])


def test_a_repeat_with_other_turns_is_an_error(repeated_file, tmp_path):
    _, entries = repeated_file
    bad = copy.deepcopy(entries[:3])
    ids = bad[2]["haystack_session_ids"]
    second = max(i for i, sid in enumerate(ids) if ids.count(sid) > 1)
    bad[2]["haystack_sessions"][second][0]["content"] += " (edited)"
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(InputError) as err:
        parse_dataset("longmemeval", tmp_path)
    message = str(err.value)
    assert bad[2]["question_id"] in message and repr(ids[second]) in message and "other turns" in message


def test_two_listings_are_one_session_to_turn2session(tmp_path):
    """Worked by hand: the filler F is listed twice; BM25 ranks the turns F, F, X, A (A the evidence). Upstream
    counts F once, so turn2session@3 widens its prefix to [F, F, X, A] and finds A (recall_any@3 = 1, DCG
    1/log2(4) over an ideal of 1); scoring the listings as two sessions would stop at [F, F#2, X] and miss A."""
    def session(text, answer=False):
        return [{"role": "user", "content": text, "has_answer": answer}, {"role": "assistant", "content": "ok"}]

    texts = {"answer_a": "alpha beta", "ultrachat_f": "gamma gamma gamma delta", "sharegpt_x": "gamma gamma kappa",
             **{f"sharegpt_{w}": w for w in ("zeta", "eta", "theta", "iota", "lambda", "mu")}}
    ids = ["answer_a", "ultrachat_f", "sharegpt_x", "sharegpt_zeta", "ultrachat_f", *list(texts)[3:][1:]]
    entry = {"question_id": "q1", "question": "gamma gamma gamma alpha", "question_type": "single-session-user",
             "question_date": "2023/05/30 (Tue) 10:00", "answer": "x", "answer_session_ids": ["answer_a"],
             "haystack_session_ids": ids, "haystack_sessions": [session(texts[s], s == "answer_a") for s in ids],
             "haystack_dates": [f"2023/05/{10 + i} (Wed) 10:00" for i in range(len(ids))]}
    (tmp_path / "tiny.json").write_text(json.dumps([entry]), encoding="utf-8")
    data = parse_dataset("longmemeval", tmp_path)
    data.write(tmp_path, {})
    ingest(tmp_path, tmp_path)
    run = rank_dataset(benchmark("longmemeval"), tmp_path, load_adapter("bm25-upstream"), depth=10)
    turns = list(run[run.granularity == "turn"].sort_values("rank").item_id)
    assert sorted(turns[:2]) == ["ultrachat_f#2_1", "ultrachat_f_1"] and turns[2:4] == ["sharegpt_x_1", "answer_a_1"]
    ours = {r.metric: r.value for r in scorer.score(run, Gold.load(tmp_path)).itertuples()}
    assert ours["turn2session/recall_any@3"] == 1.0
    assert ours["turn2session/ndcg_any@3"] == pytest.approx(1 / np.log2(4))
    assert ours["turn/recall_any@3"] == 0.0 and ours["session/recall_any@3"] == 0.0
