# Parse a benchmark's native files into normalised Parquet tables and a visible normalisation log. A local copy
# (`path:`) is tracked by the files its parser reads and their sha256, so an edit inside a folder reruns its parse.


rule parse:
    input:
        source=dataset_files,
        errata=errata_files,
    output:
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        qrels="results/{dataset}/qrels.parquet",
        evidence_errata="results/{dataset}/evidence_errata.parquet",
        gold_roles="results/{dataset}/gold_roles.parquet",
        rubrics="results/{dataset}/rubrics.parquet",
        normalization="results/{dataset}/normalization.json",
    params:
        source=dataset_source,
        sha256=dataset_digests,
        kind=lambda w: dataset_spec(w)["kind"],
        errata=errata_settings,
        subset=config["subset"],
        category_names=lambda w: dataset_spec(w).get("category_names"),
        options=lambda w: {k: dataset_spec(w).get(k) for k in dataset_benchmark(w).parse_options},
        code=script_version("scripts/parse.py"),
    log:
        "logs/parse/{dataset}.log",
    benchmark:
        "benchmarks/parse/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/parse.py"
