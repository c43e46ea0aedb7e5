"""Figures from scores: bootstrap CIs and paired tests, the aggregate tables, and the comparison of two runs."""
