# Config validation, the dataset list and the input functions every stage shares.

import re

from membench.config import enabled_datasets, is_local, validate_config
from membench.provenance import code_version

validate_config(config)

DATASETS = enabled_datasets(config)
RESOURCES = config["resources_dir"]
ENV = "../../envs/membench.yaml"


wildcard_constraints:
    dataset="|".join(re.escape(d) for d in config["datasets"]) or "NO_DATASET",


def dataset_spec(wildcards):
    return config["datasets"][wildcards.dataset]


def dataset_source(wildcards):
    """A local copy is read in place; otherwise the download rule's folder."""
    spec = dataset_spec(wildcards)
    if is_local(spec):
        return spec["path"]
    return f"{RESOURCES}/{wildcards.dataset}"
