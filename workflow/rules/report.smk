# Gather every dataset's outputs into results/report.md.


rule report:
    input:
        normalization=expand("results/{dataset}/normalization.json", dataset=DATASETS),
        queries=expand("results/{dataset}/view/queries.parquet", dataset=DATASETS),
    output:
        report="results/report.md",
    params:
        datasets=DATASETS,
        code=code_version("membench/report"),
    log:
        "logs/report.log",
    conda:
        ENV
    script:
        "../../scripts/report.py"
