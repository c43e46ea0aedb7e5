"""Rule rank_memory: one memory system over one dataset -> run Parquet, TREC run, metadata, cost record."""
import os

os.environ.setdefault("OMP_NUM_THREADS", str(snakemake.threads))  # the embedding model keeps to `threads:`

from pathlib import Path  # noqa: E402

from membench.logs import log_to  # noqa: E402
from membench.memory import stage  # noqa: E402

with log_to(snakemake.log[0], file_only=("mem0",)):  # mem0 logs each insert at INFO
    out, p, w = snakemake.output, snakemake.params, snakemake.wildcards
    stage.run(p.kind, dict(snakemake.input.items()), p.spec, dict(p.adapter_params), p.depth,
              w.adapter, run_path=out.run, trec_path=out.trec, meta_path=out.meta, cost_path=out.cost,
              store_root=Path(p.store), embeddings_dir=Path(p.embeddings), config={"llm": dict(p.llm)},
              llm_cache=Path(p.llm_cache), dataset=w.dataset,
              embedding_options=dict(p.embedding_options))
