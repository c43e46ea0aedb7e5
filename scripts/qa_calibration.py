"""Rule qa_calibration: grade probes of known correctness with the QA judge (LongMemEval, LoCoMo)."""
from membench.plumbing.job import run_stage
from membench.stages import calibration

run_stage(snakemake, calibration.rule_qa_calibration)
