# Score a run against the dataset's gold: one row per question x metric (benchmark parity formulas), and its
# efficiency rows (tokens of its top k, recall within a token budget) from what each turn costs to read.


rule item_tokens:
    input:
        turns="results/{dataset}/turns.parquet",
    output:
        tokens="results/{dataset}/efficiency/tokens.parquet",
    params:
        code=script_version("scripts/item_tokens.py"),
    log:
        "logs/item_tokens/{dataset}.log",
    conda:
        ENV
    script:
        "../../scripts/item_tokens.py"


# What a score job reads: the run, the dataset's gold tables and its items' token counts.
SCORE_INPUT = dict(
    run="results/{dataset}/runs/{run}.parquet",
    questions="results/{dataset}/questions.parquet",
    turns="results/{dataset}/turns.parquet",
    haystacks="results/{dataset}/haystacks.parquet",
    qrels="results/{dataset}/qrels.parquet",
    gold_roles="results/{dataset}/gold_roles.parquet",
    tokens="results/{dataset}/efficiency/tokens.parquet",
)


rule score:
    input:
        **SCORE_INPUT,
    output:
        scores="results/{dataset}/scores/{run}.parquet",
        efficiency="results/{dataset}/efficiency/runs/{run}.parquet",
    wildcard_constraints:
        dataset=dataset_pattern(UNLOGGED_DATASETS),
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        code=script_version("scripts/score.py"),
    log:
        "logs/score/{dataset}/{run}.log",
    benchmark:
        "benchmarks/score/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../../scripts/score.py"


# A dataset whose benchmark has its own retrieval-log format (LongMemEval): the same scoring, and the run's logs
# in that format, one per granularity, in the same job.
rule score_logged:
    input:
        **SCORE_INPUT,
    output:
        scores="results/{dataset}/scores/{run}.parquet",
        efficiency="results/{dataset}/efficiency/runs/{run}.parquet",
        logs=expand("results/{{dataset}}/runs/{{run}}.retrieval_log.{granularity}.jsonl",
                    granularity=LOG_GRANULARITIES),
    wildcard_constraints:
        dataset=dataset_pattern(LOGGED_DATASETS),
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        code=script_version("scripts/score_logged.py"),
    log:
        "logs/score/{dataset}/{run}.log",
    benchmark:
        "benchmarks/score/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../../scripts/score_logged.py"


# Where evidence errata are applied (errata.evidence: apply), the same run scored on the evidence as published,
# for the questions an erratum changed: the report shows each figure it moves both ways.
rule score_published:
    input:
        run="results/{dataset}/runs/{run}.parquet",
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
        evidence_errata="results/{dataset}/evidence_errata.parquet",
    output:
        scores="results/{dataset}/scores-published/{run}.parquet",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        code=script_version("scripts/score_published.py"),
    log:
        "logs/score_published/{dataset}/{run}.log",
    conda:
        ENV
    script:
        "../../scripts/score_published.py"


# Seconds of work: run beside snakemake rather than wait in a cluster queue.
localrules:
    aggregate,
    summary,


# Means with CIs, paired tests and the wide per-question table, per dataset: a dataset's figures (and its plots) are
# redone only when its own scores change.
rule aggregate:
    input:
        scores=dataset_score_files,
        questions="results/{dataset}/questions.parquet",
    output:
        summary="results/{dataset}/summary.parquet",
        significance="results/{dataset}/significance.parquet",
        per_question="results/{dataset}/per_question.parquet",
        per_question_csv="results/{dataset}/per_question.csv",
    params:
        score_keys=dataset_score_keys,
        kind=lambda w: dataset_spec(w)["kind"],
        cluster=config["report"]["cluster_bootstrap"],
        ablation=ablated(config),
        baseline=config["baseline"],
        resamples=config["report"]["bootstrap_resamples"],
        seed=config["report"]["seed"],
        subset=config["subset"],
        code=script_version("scripts/aggregate.py"),
    log:
        "logs/aggregate/{dataset}.log",
    benchmark:
        "benchmarks/aggregate/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/aggregate.py"


# Every dataset's summary and tests in one table each, for the report and the artifacts.
rule summary:
    input:
        summaries=expand("results/{dataset}/summary.parquet", dataset=DATASETS),
        significance=expand("results/{dataset}/significance.parquet", dataset=DATASETS),
    output:
        summary="results/summary.parquet",
        significance="results/significance.parquet",
    params:
        code=script_version("scripts/summary.py"),
    log:
        "logs/summary.log",
    conda:
        ENV
    script:
        "../../scripts/summary.py"
