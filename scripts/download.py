"""Rule download: fetch a dataset's files with retries and checksum checks into resources/{dataset}."""
from membench.jobs.job import run_stage
from membench.stages import download

run_stage(snakemake, download.rule_download)
