# Write gold-free session logs (one events.jsonl per distinct session) and the scorer-side id maps.


rule ingest:
    input:
        questions="results/{dataset}/questions.parquet",
        turns="results/{dataset}/turns.parquet",
        haystacks="results/{dataset}/haystacks.parquet",
        normalization="results/{dataset}/normalization.json",
    output:
        sessions=directory("results/{dataset}/sessions"),
        queries="results/{dataset}/view/queries.parquet",
        haystacks="results/{dataset}/view/haystacks.parquet",
        item_map="results/{dataset}/maps/item_map.parquet",
        query_map="results/{dataset}/maps/query_map.parquet",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        units=lambda w: dataset_spec(w)["units"],
        code=script_version("scripts/ingest.py"),
    log:
        "logs/ingest/{dataset}.log",
    benchmark:
        "benchmarks/ingest/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/ingest.py"
