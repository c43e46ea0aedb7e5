"""Rule qa_calibration: grade probes of known correctness with the QA judge (LongMemEval, LoCoMo)."""
from membench.runs.handoff import run_stage
from membench.stages import qa_calibration

run_stage(snakemake, qa_calibration.rule_qa_calibration)
