"""Scorers: a run (per benchmark) or the QA stage's answers (`qa`) plus the gold tables -> one row per question x
metric."""
