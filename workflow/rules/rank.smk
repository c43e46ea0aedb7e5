# Rank every question of a dataset with one adapter, through the gold-free view only. With
# retrieval.shards > 1 the questions are ranked in that many rank_part jobs and merged into the same files.


RANK_INPUT = dict(
    sessions="results/{dataset}/sessions",
    queries="results/{dataset}/view/queries.parquet",
    haystacks="results/{dataset}/view/haystacks.parquet",
    item_map="results/{dataset}/maps/item_map.parquet",
    query_map="results/{dataset}/maps/query_map.parquet",
    facts=rank_facts,
    embedded=rank_embeddings,
    code=adapter_sources,
)
RANK_PARAMS = dict(
    kind=lambda w: dataset_spec(w)["kind"],
    benchmark=benchmark_fields("granularities", "user_turns_only", "full_depth"),
    spec=adapter_spec,
    adapter_params=adapter_params,
    depth=config["retrieval"]["depth"],
    embeddings=EMBEDDINGS,
    embedding_options=EMBEDDING_OPTIONS,
    version=lambda w: adapter_version(adapter_spec(w), adapter_params(w)),
    sealed=config["memory_sealed"],
    sealed_timeout=config["memory_call_timeout"],
    data=dataset_source,
)


rule rank:
    input:
        **RANK_INPUT,
        parts=rank_parts,
    output:
        run="results/{dataset}/runs/{run}.parquet",
        trec="results/{dataset}/runs/{run}.trec",
        meta="results/{dataset}/runs/{run}.json",
    params:
        **RANK_PARAMS,
        code=script_version("scripts/rank.py"),
    threads: 1
    log:
        "logs/rank/{dataset}/{run}.log",
    benchmark:
        "benchmarks/rank/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../../scripts/rank.py"


rule rank_part:
    input:
        **RANK_INPUT,
    output:
        part=temp("results/{dataset}/runs/parts/{run}.{part}.parquet"),
    params:
        **RANK_PARAMS,
        parts=RANK_PARTS,
        code=script_version("scripts/rank_part.py"),
    threads: 1
    log:
        "logs/rank_part/{dataset}/{run}.{part}.log",
    benchmark:
        "benchmarks/rank_part/{dataset}/{run}.{part}.tsv"
    conda:
        ENV
    script:
        "../../scripts/rank_part.py"
