# Procedural judge: grade unlabelled trajectories in a run's top k; score over labels + pooled judgments.


rule judge:
    input:
        run="results/{dataset}/runs/{run}.parquet",
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
    output:
        judgments="results/{dataset}/judgments/{run}.parquet",
        cost="results/{dataset}/costs/judge-{run}.json",
    params:
        config=lambda w: {k: config[k] for k in ("llm", "judge")},
        cache=LLM_CACHE,
        code=script_version("scripts/judge.py"),
    resources:
        llm=1,
    log:
        "logs/judge/{dataset}/{run}.log",
    benchmark:
        "benchmarks/judge/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../../scripts/judge.py"


rule score_extended:
    input:
        run="results/{dataset}/runs/{run}.parquet",
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
        judgments=lambda w: [f"results/{d}/judgments/{a}.parquet" for d, a in JUDGED if d == w.dataset],
    output:
        scores="results/{dataset}/scores/{run}.extended.parquet",
    params:
        code=script_version("scripts/score_extended.py"),
    log:
        "logs/score_extended/{dataset}/{run}.log",
    conda:
        ENV
    script:
        "../../scripts/score_extended.py"
