"""results/report.md: the tables, breakdowns, plots and provenance a paper can cite."""
