"""The rank loop's shortcuts give exactly what the plain code gave: BM25 postings vs rank-bm25's own
get_scores (bit for bit, on every real LoCoMo conversation), bm25-upstream's remembered counts and term columns vs
a BM25Okapi built and asked afresh, substring's per-haystack keyword columns vs its plain definition, the lexsort
order vs a stable sort on (-score, position), and a haystack's documents built once per haystack."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from conftest import shared_path
from membench.adapters.base import order_by_score
from membench.adapters.bm25 import BM25Index
from membench.adapters.bm25_upstream import FrequencyMemo, UpstreamIndex
from membench.adapters.substring import SubstringAdapter
from membench.adapters.text import keywords
from membench.benchmarks.registry import parse_dataset
from membench.sessions.reader import SessionStore
from membench.stages.ingest import ingest
from membench.sessions.view import Document, Query
from membench.adapters.term_counts import TermCache
from membench.adapters.text import HaystackCache, word_tokens


@pytest.fixture(scope="module")
def locomo_plus(tmp_path_factory):
    """LoCoMo-Plus parsed and ingested: each of its questions has a haystack of its own, from the same sessions."""
    shared_path("locomo-plus", "locomo_plus.json")
    folder = tmp_path_factory.mktemp("locomo-plus")
    parse_dataset("locomo-plus", shared_path()).write(folder, {})
    ingest(folder, folder)
    return folder


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


def same_okapi(ours: BM25Okapi, theirs: BM25Okapi) -> bool:
    """Every field equal, and every dict in the same order too (rank_bm25's idf sum runs in `nd`'s order)."""
    mine, upstream = vars(ours), vars(theirs)
    if mine.keys() != upstream.keys():
        return False
    for field in mine:
        a, b = mine[field], upstream[field]
        if field == "doc_freqs":
            a, b = [list(d.items()) for d in a], [list(d.items()) for d in b]
        elif isinstance(a, dict):
            a, b = list(a.items()), list(b.items())
        if a != b:
            return False
    return True


def test_upstream_okapi_from_remembered_counts_is_rank_bm25s_own(locomo_plus):
    """bm25-upstream counts each text once per run: on LoCoMo-Plus's first 60 haystacks (each question's own, from
    the same sessions), with a cap small enough that the memo starts anew, every index is field for field the
    BM25Okapi that upstream's code builds, and scores the same bits."""
    store = SessionStore(locomo_plus)
    queries = {key: query for query, key in store.queries()}
    memo, resets = FrequencyMemo(max_texts=5_000), 0
    for key in store.haystack_keys()[:60]:
        before = len(memo._memo)
        documents = store.haystack(key).documents("turn")
        index, okapi = UpstreamIndex(documents, memo), BM25Okapi([d.text.split(" ") for d in documents])
        resets += len(memo._memo) < before
        assert same_okapi(index.okapi, okapi), key
        terms = queries[key].text.split(" ")
        assert index.get_scores(terms).tobytes() == okapi.get_scores(terms).tobytes(), key
    assert resets >= 2


def test_upstream_index_gives_rank_bm25s_scores_bit_for_bit_with_columns_reused(ingested):
    """bm25-upstream keeps each term's frequency column for the haystack's later questions: every question of
    every real LoCoMo conversation (upstream's `split(" ")`, repeated terms and an unknown one included) scores
    as a fresh BM25Okapi.get_scores, asked in the same order on one index."""
    store = SessionStore(ingested["locomo"])
    by_haystack: dict = {}
    for query, key in store.queries():
        by_haystack.setdefault(key, []).append(query)
    compared = reused = 0
    memo = FrequencyMemo()
    for key, questions in by_haystack.items():
        documents = store.haystack(key).documents("turn")
        index, okapi = UpstreamIndex(documents, memo), BM25Okapi([d.text.split(" ") for d in documents])
        assert same_okapi(index.okapi, okapi), key
        for query in questions:
            terms = query.text.split(" ") + ["zzz-not-a-word", query.text.split(" ")[0]]
            reused += sum(t in index.columns for t in terms)
            ours, theirs = index.get_scores(terms), okapi.get_scores(terms)
            assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes(), (key, query.key)
            compared += 1
    assert compared == 1986 and reused > 10_000


def plain_substring(query: str, documents) -> list[float]:
    """substring's definition as written before its per-haystack columns: the distinct keywords in each text."""
    terms = keywords(query)
    return [float(sum(1 for t in terms if t in d.text.lower())) for d in documents]


def test_substring_with_remembered_keyword_columns_counts_as_the_plain_definition(ingested):
    adapter = SubstringAdapter()
    store = SessionStore(ingested["locomo"])
    compared = 0
    for query, key in store.queries():
        documents = store.haystack(key).documents("turn")
        assert adapter.score(query, documents) == plain_substring(query.text, documents), (key, query.key)
        compared += 1
    assert compared == 1986
    # by hand: empty texts, a text with newlines, a keyword at a text's very end, repeats counted once, unicode
    edge = [Document(f"d{i}", text, "s", None, i) for i, text in enumerate(
        ["", "Cooking\nCOOK cook", "", "a cook", "naïve café", "cook"])]
    for text, expected in (("cook cooking", [0.0, 2.0, 0.0, 1.0, 0.0, 1.0]), ("CAFÉ naïve x", [0.0, 0, 0, 0, 2, 0]),
                           ("the", [0.0] * 6)):
        assert SubstringAdapter().score(Query("q", text), edge) == expected == plain_substring(text, edge)


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


def test_counts_remembered_across_haystacks_give_rank_bm25s_scores_bit_for_bit(locomo_plus):
    """One cache over LoCoMo-Plus's first 60 haystacks (each question's own, drawn from the same sessions), with
    caps small enough that it starts anew several times: every index still scores as a BM25Okapi built alone."""
    store = SessionStore(locomo_plus)
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
