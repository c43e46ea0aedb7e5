"""`llamaindex`: LlamaIndex (`pip install "membench[llamaindex]"`) as agent memory, through `VectorStoreIndex`.

Why not its Memory API: the vector memory block (`VectorMemoryBlock`, the long-term block of `Memory`)
answers `aget()` with one formatted string of past messages, not items with ids, so its results cannot be
mapped back to turns; it also embeds a whole `aput` batch as one node, wrapped in `<message role=...>` text,
and needs a text-storing vector store. The block is built on the same retrieval this system drives:
a `VectorStoreIndex` over the default (in-process) `SimpleVectorStore`, searched with its retriever.

Driven: one `TextNode` per turn (id = the turn's ref, metadata `session`, excluded from the embedded text, else
LlamaIndex prepends "session: ..." to what it embeds; source document = the session, so `forget` is
`index.delete_ref_doc(session)`), `index.insert_nodes` per session, `index.as_retriever(similarity_top_k=k)
.retrieve(question)`. No LLM is involved (retrieval only). Embedder: a LlamaIndex `BaseEmbedding` over membench's
embedding cache (the packaged MiniLM), so vectors are `dense`'s; the store scores by exact cosine (numpy).

Persistence: `storage_context.persist` after each session, `load_index_from_storage` on reopening. The simple store
persists as whole JSON files, rewritten each time, so the store is one per haystack (`shares_sessions` False): a
store of all sessions would rewrite every vector of the dataset after each session. Those files are written in
place, so a run killed while writing them left JSON that no rerun could load: each persist goes into a new folder
(`llamaindex-<n>`), named in `llamaindex.current` (written atomically) once complete, and the previous one is then
removed; a rerun loads the last complete one and the ingest ledger redoes the cut-off session.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Sequence

from membench.io import atomic_write_text
from membench.memory.systems.library import LibrarySystem, session_turns
from membench.memory.protocol import Hit, MemoryContext, Scope, SessionLog
from membench.sessions.view import Query

PERSIST = "llamaindex"  # + "-<n>": one complete persist; CURRENT names the last
CURRENT = "llamaindex.current"


def cached_embedding(cache):
    """A LlamaIndex embedding model whose vectors come from membench's embedding cache."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from pydantic import PrivateAttr

    class MembenchEmbedding(BaseEmbedding):
        _cache: Any = PrivateAttr()

        def __init__(self, cache, **kwargs):
            super().__init__(model_name="all-MiniLM-L6-v2 (membench embedding cache)", embed_batch_size=2048,
                             **kwargs)
            self._cache = cache

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._cache.encode([query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._cache.encode([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._cache.encode(list(texts)).tolist()

    return MembenchEmbedding(cache)


class LlamaIndexSystem(LibrarySystem):
    name = "llamaindex"
    stored_as = " as one LlamaIndex TextNode (session as unembedded metadata)"
    index: Any = None

    def open(self, context: MemoryContext) -> None:
        super().open(context)
        self.import_library("llama_index.core", "llamaindex", "llama-index-core")
        from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage

        self.embed_model = cached_embedding(context.embedding_cache)
        pointer = Path(context.store_dir) / CURRENT
        self.persist_dir = Path(context.store_dir) / pointer.read_text(encoding="utf-8").strip() \
            if pointer.exists() else None
        if self.persist_dir is not None:
            storage = StorageContext.from_defaults(persist_dir=str(self.persist_dir))
            self.index = load_index_from_storage(storage, embed_model=self.embed_model)
        else:
            self.index = VectorStoreIndex(nodes=[], embed_model=self.embed_model)

    def _persist(self) -> None:
        """Write the index into a new folder, then name it current and remove the previous (module docstring)."""
        store = Path(self.context.store_dir)
        generation = int(self.persist_dir.name.rsplit("-", 1)[1]) + 1 if self.persist_dir is not None else 1
        target = store / f"{PERSIST}-{generation}"
        shutil.rmtree(target, ignore_errors=True)  # a half-written folder a killed run left
        self.index.storage_context.persist(persist_dir=str(target))
        atomic_write_text(store / CURRENT, target.name)
        if self.persist_dir is not None:
            shutil.rmtree(self.persist_dir, ignore_errors=True)
        self.persist_dir = target

    def ingest(self, log: SessionLog) -> None:
        from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

        nodes = [TextNode(id_=ref, text=text, metadata={"session": log.key}, excluded_embed_metadata_keys=["session"],
                          excluded_llm_metadata_keys=["session"],
                          relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=log.key)})
                 for ref, text in session_turns(log, self.params["content"])]
        self.index.insert_nodes(nodes)
        self._persist()

    def forget(self, session_key: str) -> None:
        self.index.delete_ref_doc(session_key, delete_from_docstore=True)
        self._persist()

    def search(self, query: Query, k: int, scope: Scope) -> Sequence[Hit]:
        if k <= 0:
            return []
        found = self.index.as_retriever(similarity_top_k=k).retrieve(query.text)
        return [Hit((n.node.node_id,), float(n.score), n.node.get_content()) for n in found]

    def close(self) -> None:
        self.index = None
