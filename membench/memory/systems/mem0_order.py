"""mem0's vector search in an order that depends on the memories, not on how its local store is laid out.

mem0 searches its embedded Qdrant twice: for the question (`Memory.search`) and, with `infer: true`, for the
memories already in a session that its extraction prompt quotes. Local Qdrant ranks by `argsort` over its
internal slots, and those slots are not the same for the same memories: a store reopened from disk loads
its points newest first, `forget` leaves deleted slots behind, and each search renormalises the stored
vectors in place, which moves their last bits. So equal or near-equal similarities (mem0 stores many
identical texts: "Thanks!", a fact two sessions share) came back in a different order from a resumed store
than from a fresh one, and the top-k cut fell on different memories.

`layout_free(store, cache)` wraps the store's `search`: it scores each candidate again from membench's
embedding cache (the same bytes for a text whichever store holds it; `membench.embedding.similarity.cosine_scores`, the
same bits on every machine), orders by
that score, then older session first, then turn refs, then text, and fetches more candidates until no
memory left out by Qdrant could still reach the cut (Qdrant's own score is within `SLACK` of the exact one).
"""

from __future__ import annotations

from membench.embedding.similarity import as_columns, cosine_scores

SLACK = 1e-4  # bound on |Qdrant's float32 cosine - the exact one| for unit vectors of 384 floats, with margin


def order_key(payload: dict) -> tuple:
    """Ties between equal scores: older session first, then the turns named, then the text."""
    return (payload.get("created_at") or "", tuple(payload.get("refs") or ()), payload.get("data") or "")


def exact_order(points, query_vector, cache) -> list[tuple[float, object]]:
    """(exact score, point) best first; a point's vector comes from the cache by its text (`data`)."""
    if not points:
        return []
    vectors = as_columns(cache.encode([p.payload.get("data") or "" for p in points]))
    scores = cosine_scores(vectors, query_vector)
    ranked = sorted(zip(scores.tolist(), range(len(points))), key=lambda s: (-s[0], order_key(points[s[1]].payload)))
    return [(score, points[i]) for score, i in ranked]


def layout_free(store, cache) -> None:
    """Replace `store.search` (a mem0 Qdrant vector store) with the layout-free search described above."""
    search = store.search

    def ordered_search(query, vectors, top_k=5, filters=None):
        fetch = max(2 * top_k, top_k + 20)
        while True:
            found = search(query=query, vectors=vectors, top_k=fetch, filters=filters)
            ranked = exact_order(found, vectors, cache)
            complete = len(found) < fetch or top_k == 0 or ranked[top_k - 1][0] > found[-1].score + SLACK
            if complete:
                return [point.model_copy(update={"score": score}) for score, point in ranked[:top_k]]
            fetch *= 2

    store.search = ordered_search
