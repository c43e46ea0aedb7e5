"""Validity rule 1: adapters never see gold. Permuting every gold label leaves every run byte-identical."""

from __future__ import annotations

import json
import random

import pytest

from conftest import locomo_slice
from membench.benchmarks.registry import benchmark
from membench.runs.registry import builtin_adapters, load_adapter
from membench.benchmarks.registry import parse_dataset
from membench.stages.ingest import ingest
from membench.datasets.run_files import write_trec
from membench.stages.rank import granularities_for, rank_dataset
from membench.io import atomic_write_parquet


def permute_locomo(data, rng):
    qas = [qa for conv in data for qa in conv["qa"]]
    fields = [(qa.get("answer"), qa.get("adversarial_answer"), qa["evidence"]) for qa in qas]
    rng.shuffle(fields)
    for qa, (answer, adversarial, evidence) in zip(qas, fields):
        qa.pop("answer", None), qa.pop("adversarial_answer", None)
        if answer is not None:
            qa["answer"] = answer
        if adversarial is not None:
            qa["adversarial_answer"] = adversarial
        if answer is None and adversarial is None:
            qa["answer"] = "x"
        qa["evidence"] = evidence
    for conv in data:
        conv.pop("observation", None)
    return data


def permute_procedural(bank, rng):
    labels = [q["relevant_trajectories"] for q in bank["queries"]]
    rng.shuffle(labels)
    for q, lab in zip(bank["queries"], labels):
        q["relevant_trajectories"] = [dict(x, relevance_score=float(rng.randint(6, 10))) for x in lab]
    return bank


def permute_longmemeval(records, rng):
    for rec in records:
        rec["answer"] = "permuted"
        for turns in rec["haystack_sessions"]:
            for t in turns:
                t.pop("has_answer", None)
        pick = rng.randrange(len(rec["haystack_sessions"]))
        for t in rec["haystack_sessions"][pick]:
            t["has_answer"] = t["role"] == "user"
        rec["answer_session_ids"] = [rec["haystack_session_ids"][pick]]
    return records


def build(kind, source, out):
    parse_dataset(kind, source).write(out, {})
    ingest(out, out)
    return out


def write_permuted(kind, src_dir, dst, rng):
    dst.mkdir(parents=True)
    if kind == "locomo":
        data = json.loads((src_dir / "locomo10.json").read_text(encoding="utf-8"))
        (dst / "locomo10.json").write_text(json.dumps(permute_locomo(data, rng)), encoding="utf-8")
    elif kind == "procedural":
        (dst / "agentinstruct_trajectories.json").write_bytes((src_dir / "agentinstruct_trajectories.json").read_bytes())
        bank = json.loads((src_dir / "query_bank.json").read_text(encoding="utf-8"))
        (dst / "query_bank.json").write_text(json.dumps(permute_procedural(bank, rng)), encoding="utf-8")
    else:
        name = "longmemeval_s_cleaned_partial_2q.json"
        data = json.loads((src_dir / name).read_text(encoding="utf-8"))
        (dst / name).write_text(json.dumps(permute_longmemeval(data, rng)), encoding="utf-8")
    return dst


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["longmemeval", "locomo", "procedural"])
def test_runs_are_byte_identical_under_gold_permutation(kind, request, tmp_path, embedding_dir):
    src_dir = request.getfixturevalue(f"{kind}_dir")
    if kind == "locomo":  # two conversations (304 QA) carry every kind of gold the permutation moves
        src_dir = locomo_slice(src_dir, tmp_path / "slice")
    rng = random.Random(7)
    original = build(kind, src_dir, tmp_path / "orig")
    permuted_src = write_permuted(kind, src_dir, tmp_path / "perm_src", rng)
    permuted = build(kind, permuted_src, tmp_path / "perm")
    qrels = [(d / "qrels.parquet").read_bytes() for d in (original, permuted)]
    assert qrels[0] != qrels[1], "the permutation must really change the gold"
    checked = 0
    for name in builtin_adapters():
        files = []
        for folder in (original, permuted):
            adapter = load_adapter(name, {}, {"embedding_cache_dir": embedding_dir})
            if not granularities_for(benchmark(kind), adapter):
                break
            run = rank_dataset(benchmark(kind), folder, adapter, depth=50)
            atomic_write_parquet(run, folder / f"{name}.parquet")
            write_trec(run, folder / f"{name}.trec", name)
            files.append(((folder / f"{name}.parquet").read_bytes(), (folder / f"{name}.trec").read_bytes()))
        if files:
            assert files[0] == files[1], f"{name} on {kind}: the run changed when only the gold changed"
            checked += 1
    assert checked == {"longmemeval": 7, "locomo": 7, "procedural": 9}[kind]
