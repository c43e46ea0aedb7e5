"""Retrieval metrics, one question at a time.

- :mod:`membench.metrics.trec` - trec_eval-style measures over the full qrels (P, R, F1, nDCG, AP, RR, judged).
- :mod:`membench.benchmarks.longmemeval.metrics` - LongMemEval's own retrieval protocol (recall_any, recall_all,
  ndcg_any, turn-to-session widening), reproduced for parity with the upstream scorer.
- :mod:`membench.benchmarks.locomo.metrics` - LoCoMo's evidence recall.
- :mod:`membench.benchmarks.procedural.metrics` - the Procedural Memory Benchmark: full-label trec measures plus the
  upstream runner's retrieved-list-only formulas (``upstream/`` keys).

Every function takes one ranked list (item ids, best first) and returns plain floats; averaging,
skipping and confidence intervals are the caller's job (see :mod:`membench.analysis.stats`).
"""
