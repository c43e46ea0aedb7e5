# Rank every question of a dataset with one adapter, through the gold-free view only.


rule rank:
    input:
        sessions="results/{dataset}/sessions",
        queries="results/{dataset}/view/queries.parquet",
        haystacks="results/{dataset}/view/haystacks.parquet",
        item_map="results/{dataset}/maps/item_map.parquet",
        query_map="results/{dataset}/maps/query_map.parquet",
        facts=rank_facts,
        code=adapter_sources,
    output:
        run="results/{dataset}/runs/{adapter}.parquet",
        trec="results/{dataset}/runs/{adapter}.trec",
        meta="results/{dataset}/runs/{adapter}.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        spec=adapter_spec,
        adapter_params=adapter_params,
        depth=config["retrieval"]["depth"],
        embeddings=EMBEDDINGS,
        version=lambda w: adapter_version(adapter_spec(w), adapter_params(w)),
        code=code_version("membench/stages/rank.py", "membench/sessions/reader.py", "membench/sessions/view.py"),
    threads: 2
    resources:
        embedder=embedder_slots,
    log:
        "logs/rank/{dataset}/{adapter}.log",
    benchmark:
        "benchmarks/rank/{dataset}/{adapter}.tsv"
    conda:
        ENV
    script:
        "../../scripts/rank.py"
