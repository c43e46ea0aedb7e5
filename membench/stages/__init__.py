"""One function per workflow stage, over plain paths, so rules stay thin and stages run without Snakemake."""
