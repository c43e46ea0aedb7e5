# Embed every distinct text a dataset's embedding runs need, once, in shards that run side by side;
# rank jobs of those runs then only read vectors from the content-addressed cache.


rule embed_texts:
    input:
        sessions="results/{dataset}/sessions",
        queries="results/{dataset}/view/queries.parquet",
        haystacks="results/{dataset}/view/haystacks.parquet",
        facts=embedding_facts,
        code=embedding_sources,
    output:
        texts="results/{dataset}/embeddings/texts.parquet",
        summary="results/{dataset}/embeddings/texts.json",
    params:
        kind=lambda w: dataset_spec(w)["kind"],
        benchmark=benchmark_fields("granularities", "user_turns_only"),
        runs=embedding_runs,
        options=EMBEDDING_OPTIONS,
        code=code_version("membench/stages/embed.py", "membench/embedding_plan.py", "membench/sessions"),
    log:
        "logs/embed_texts/{dataset}.log",
    benchmark:
        "benchmarks/embed_texts/{dataset}.tsv"
    conda:
        ENV
    script:
        "../../scripts/embed_texts.py"


rule embed:
    input:
        texts="results/{dataset}/embeddings/texts.parquet",
    output:
        manifest="results/{dataset}/embeddings/shard-{shard}.json",
    params:
        shards=config["embedding"]["shards"],
        cache=EMBEDDINGS,
        options=EMBEDDING_OPTIONS,
        code=code_version("membench/stages/embed.py", "membench/embeddings.py", "membench/encoder.py"),
    threads: 1
    log:
        "logs/embed/{dataset}/{shard}.log",
    benchmark:
        "benchmarks/embed/{dataset}/{shard}.tsv"
    conda:
        ENV
    script:
        "../../scripts/embed.py"
