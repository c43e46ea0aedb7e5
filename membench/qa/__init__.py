"""Answer mode (LongMemEval, LoCoMo): answer each question from an adapter's top-K retrieved items
(`answer`), then judge the answer against the gold by the benchmark's rules (`verdict`); LoCoMo's token F1
is in `membench.benchmarks.locomo.answer_f1`. `relevance_judge`: the LLM grading of unlabelled Procedural trajectories."""
