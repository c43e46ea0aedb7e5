# Fetch a dataset's files (retries, sha256 check, safe extraction) unless it is read from a local path.


# Needs internet, which compute nodes often lack: runs where snakemake runs, never as a cluster job.
localrules:
    download,


# No code version: the files are pinned by their sha256, so no edit can change them (a rerun would fetch again).
rule download:
    output:
        directory(f"{RESOURCES}/{{dataset}}"),
    params:
        spec=dataset_spec,
        retries=config["download"]["retries"],
        timeout=config["download"]["timeout"],
    log:
        "logs/download/{dataset}.log",
    conda:
        ENV
    script:
        "../../scripts/download.py"
