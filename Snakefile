# membench: benchmark how well agent-memory systems retrieve the right piece of an agent's past.
# Stages: [download] -> parse -> ingest -> [facts] -> embed -> rank | rank_memory -> score -> [judge, qa] -> aggregate
# -> tables, plots (with efficiency), explorer -> report. docs/architecture.md draws the DAG; rule x runs membench.stages.x.

from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/facts.smk"
include: "workflow/rules/embed.smk"
include: "workflow/rules/rank.smk"
include: "workflow/rules/memory.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/judge.smk"
include: "workflow/rules/qa.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        "results/report.md",
    default_target: True


onstart:
    start_fork_server()


onsuccess:
    FORK_SERVER.stop()
    print_headline()


onerror:
    FORK_SERVER.stop()
