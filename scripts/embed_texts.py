"""Rule embed_texts: a dataset's embedding runs -> the distinct texts they embed (+ a count summary)."""
from membench.runs.handoff import run_stage
from membench.stages import embed_texts

run_stage(snakemake, embed_texts.rule_embed_texts)
