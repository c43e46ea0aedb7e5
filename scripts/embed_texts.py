"""Rule embed_texts: a dataset's embedding runs -> the distinct texts they embed (+ a count summary)."""
from membench.plumbing.job import run_stage
from membench.stages import embed

run_stage(snakemake, embed.rule_embed_texts)
