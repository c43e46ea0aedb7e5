"""One module per workflow rule: rule `x` runs `membench.stages.x.rule_x(job)`, which reads its typed `Job` and calls
the package's logic, so rules stay thin and every stage runs without Snakemake too."""
