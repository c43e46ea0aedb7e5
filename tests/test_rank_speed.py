"""The rank loop's shortcuts give exactly what the plain code gave: BM25 postings vs rank-bm25's own
get_scores (bit for bit, on every real LoCoMo conversation), the lexsort order vs a stable sort on
(-score, position), and a haystack's documents built once per haystack."""

from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from conftest import shared_path
from membench.adapters.base import order_by_score
from membench.adapters.bm25 import BM25Index
from membench.benchmarks.registry import parse_dataset
from membench.sessions.reader import SessionStore
from membench.stages.ingest import ingest
from membench.sessions.view import Document
from membench.adapters.term_counts import TermCache
from membench.adapters.text import HaystackCache, word_tokens


def plain_order(documents, scores, k):
    pairs = sorted(zip(documents, (float(s) for s in scores)), key=lambda p: (-p[1], p[0].position))
    return [(doc.item_id, score) for doc, score in pairs[:k]]


def docs(n, positions=None):
    return [Document(f"d{i}", f"text {i}", "s", None, i if positions is None else positions[i]) for i in range(n)]


def test_order_by_score_matches_a_stable_sort_on_score_then_position():
    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(0, 40))
        scores = rng.choice([0.0, -0.0, 1.5, 2.0, -1.0, 1e-300], size=n) if trial % 2 else rng.normal(size=n)
        documents = docs(n, positions=list(rng.permutation(n)) if trial % 3 else None)
        for k in (0, 1, 5, 100):
            assert order_by_score(documents, scores, k) == plain_order(documents, scores, k)
    # by hand: ties go to the earlier position, -0.0 ties with 0.0, NaN takes the plain sort, float32 widens
    assert order_by_score(docs(3, [2, 0, 1]), [1.0, 1.0, 2.0], 3) == [("d2", 2.0), ("d1", 1.0), ("d0", 1.0)]
    assert order_by_score(docs(2), [-0.0, 0.0], 2) == [("d0", -0.0), ("d1", 0.0)]
    nan = [1.0, float("nan"), 3.0]
    assert [d for d, _ in order_by_score(docs(3), nan, 3)] == [d for d, _ in plain_order(docs(3), nan, 3)]
    assert order_by_score(docs(2), np.array([0.1, 0.2], dtype=np.float32), 2) == \
        plain_order(docs(2), np.array([0.1, 0.2], dtype=np.float32), 2)
    assert order_by_score(docs(3), iter([3.0, 1.0, 2.0]), 2) == [("d0", 3.0), ("d2", 2.0)]


def test_bm25_postings_give_rank_bm25s_scores_bit_for_bit(ingested):
    store = SessionStore(ingested["locomo"])
    queries = [q for q, _ in store.queries()]
    compared = 0
    for key in store.haystack_keys():
        documents = store.haystack(key).documents("turn")
        corpus = [word_tokens(d.text) for d in documents]
        index, okapi = BM25Index.of_tokens(corpus), BM25Okapi(corpus)
        for query in queries[::10]:
            terms = word_tokens(query.text) + ["zzz-not-a-word"]
            ours, theirs = index.scores(terms), okapi.get_scores(terms)
            assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes(), (key, query.key)
            compared += 1
    assert compared == 10 * len(queries[::10]) == 1990


def test_documents_are_built_once_per_haystack_and_each_call_gets_its_own_list(ingested):
    store = SessionStore(ingested["locomo"])
    key = store.haystack_keys()[0]
    haystack = store.haystack(key)
    first, second = haystack.documents("turn"), haystack.documents("turn")
    assert first == second and first is not second and all(a is b for a, b in zip(first, second))
    first.pop()
    assert len(haystack.documents("turn")) == len(second)  # a caller's edit does not reach the haystack
    assert store.haystack(key) is haystack  # questions of one conversation share it

    cache, built = HaystackCache(lambda d: object()), []
    index = cache.get(second)
    assert cache.get(haystack.documents("turn")) is index and cache.builds == 1
    assert cache.get([*second[:-1], Document("x", "other", "s", None, 0)]) is not index and cache.builds == 2


def test_counts_remembered_across_haystacks_give_rank_bm25s_scores_bit_for_bit(tmp_path):
    """One cache over LoCoMo-Plus's first 60 haystacks (each question's own, drawn from the same sessions), with
    caps small enough that it starts anew several times: every index still scores as a BM25Okapi built alone."""
    shared_path("locomo-plus", "locomo_plus.json")
    parse_dataset("locomo-plus", shared_path()).write(tmp_path, {})
    ingest(tmp_path, tmp_path)
    store = SessionStore(tmp_path)
    queries = {key: query for query, key in store.queries()}
    cache = TermCache(word_tokens, max_ids=100_000)
    vocabularies, hits = set(), 0
    keys = store.haystack_keys()[:60]
    for key in keys:
        documents = store.haystack(key).documents("turn")
        hits += sum(d.text in cache._memo for d in documents)
        counted, vocabulary = cache.count_all(d.text for d in documents)
        vocabularies.add(id(vocabulary))
        index = BM25Index(counted, vocabulary)
        corpus = [word_tokens(d.text) for d in documents]
        terms = word_tokens(queries[key].text) + ["zzz-not-a-word"]
        ours, theirs = index.scores(terms), BM25Okapi(corpus).get_scores(terms)
        assert ours.tobytes() == theirs.tobytes(), key
        assert index.vocabulary == {t for doc in corpus for t in doc}
    assert len(keys) == 60 and len(vocabularies) >= 3 and hits > 5_000  # remembered, and started anew


def test_an_index_of_empty_documents_scores_zero():
    assert BM25Index.of_tokens([]).scores(["a"]).tolist() == []
    assert BM25Index.of_tokens([[], []]).scores(["a"]).tolist() == [0.0, 0.0]
    assert BM25Index.of_tokens([["a"], []]).scores(["a"]).tolist() == BM25Okapi([["a"], []]).get_scores(["a"]).tolist()
