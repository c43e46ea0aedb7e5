"""Per-benchmark scorers: a run plus the gold tables -> one row per question x metric."""
