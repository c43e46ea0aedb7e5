"""Rule score_published: a run scored on the evidence as published, for the questions an evidence erratum changed."""
from membench.jobs.hand_over import hand_over

hand_over()  # a local run's fork server runs the rest in a child that has the imports

from membench.runs.handoff import run_stage  # noqa: E402
from membench.stages import score_published  # noqa: E402

run_stage(snakemake, score_published.rule_score_published)
