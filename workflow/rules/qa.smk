# Answer mode: answer each question from a run's top k (noting whether its gold evidence is there), judge the
# answer against the gold answer (and by the benchmark's own judge, where it has one: it may read more tables,
# `judge_tables`); calibrate the judge on probes of known correctness built from the gold data.


rule qa:
    input:
        unpack(judge_tables),
        run="results/{dataset}/runs/{run}.parquet",
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
    output:
        qa="results/{dataset}/qa/{run}.parquet",
        scores="results/{dataset}/qa/{run}.scores.parquet",
        cost="results/{dataset}/costs/qa-{run}.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        config=lambda w: {k: config[k] for k in ("llm", "qa")},
        cache=LLM_CACHE,
        code=script_version("scripts/qa.py"),
    resources:
        llm=1,
    log:
        "logs/qa/{dataset}/{run}.log",
    benchmark:
        "benchmarks/qa/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../../scripts/qa.py"


# The references a run's answers are read against (qa.full_context, qa.no_memory, qa.oracle): each question
# answered from its whole history, from nothing, and from only the sessions that hold its gold evidence.
rule qa_baseline:
    input:
        unpack(judge_tables),
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
    output:
        qa="results/{dataset}/qa/{baseline}.parquet",
        scores="results/{dataset}/qa/{baseline}.scores.parquet",
        cost="results/{dataset}/costs/qa-{baseline}.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        config=lambda w: {k: config[k] for k in ("llm", "qa")},
        cache=LLM_CACHE,
        code=script_version("scripts/qa_baseline.py"),
    resources:
        llm=1,
    log:
        "logs/qa/{dataset}/{baseline}.log",
    benchmark:
        "benchmarks/qa/{dataset}/{baseline}.tsv"
    conda:
        ENV
    script:
        "../../scripts/qa_baseline.py"


rule qa_calibration:
    input:
        questions="results/{dataset}/questions.parquet",
    output:
        probes="results/{dataset}/qa/calibration.parquet",
        cost="results/{dataset}/costs/qa-calibration.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        config=lambda w: {k: config[k] for k in ("llm", "qa")},
        cache=LLM_CACHE,
        code=script_version("scripts/qa_calibration.py"),
    resources:
        llm=1,
    log:
        "logs/qa_calibration/{dataset}.log",
    benchmark:
        "benchmarks/qa_calibration/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/qa_calibration.py"
