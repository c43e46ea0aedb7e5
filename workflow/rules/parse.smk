# Parse a benchmark's native files into normalised Parquet tables and a visible normalisation log.


rule parse:
    input:
        source=dataset_source,
        errata=errata_files,
    output:
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
        evidence_errata="results/{dataset}/evidence_errata.parquet",
        normalization="results/{dataset}/normalization.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        errata=errata_settings,
        subset=config["subset"],
        category_names=lambda w: dataset_spec(w).get("category_names"),
        code=module_version("membench.stages.parse"),
    log:
        "logs/parse/{dataset}.log",
    benchmark:
        "benchmarks/parse/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/parse.py"
