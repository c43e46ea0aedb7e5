# Facts for "value + facts" keys: LoCoMo's own observations (zero calls) or model-extracted per session.


rule facts_observation:
    input:
        source=dataset_files,
        turns="results/{dataset}/turns.parquet",
        queries="results/{dataset}/view/queries.parquet",
    output:
        directory("results/{dataset}/facts/observation"),
    params:
        source=dataset_source,
        code=script_version("scripts/facts_observation.py"),
    log:
        "logs/facts/{dataset}.observation.log",
    conda:
        ENV
    script:
        "../../scripts/facts_observation.py"


rule facts_llm:
    input:
        sessions="results/{dataset}/sessions",
        queries="results/{dataset}/view/queries.parquet",
    output:
        facts=directory("results/{dataset}/facts/llm"),
        cost="results/{dataset}/costs/facts.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        config=lambda w: {k: config[k] for k in ("llm", "facts")},
        cache=LLM_CACHE,
        code=script_version("scripts/facts_llm.py"),
    resources:
        llm=1,
    log:
        "logs/facts/{dataset}.llm.log",
    benchmark:
        "benchmarks/facts/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/facts_llm.py"
