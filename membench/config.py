"""Config validation beyond the JSON Schema: cross-field rules the schema cannot say plainly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from membench.errors import InputError

SCHEMA = Path(__file__).resolve().parent.parent / "workflow" / "schemas" / "config.schema.yaml"


def validate_config(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Validate against the schema (filling defaults in place), then check each dataset's source."""
    from snakemake.utils import validate

    _normalise_subset(config)
    try:
        validate(config, str(SCHEMA))
    except Exception as err:  # snakemake wraps jsonschema errors in WorkflowError
        raise InputError(source, f"config does not match {SCHEMA.name}: {err}") from None
    for name, spec in config["datasets"].items():
        if spec.get("path") is None and spec.get("url") is None and not spec.get("files"):
            raise InputError(source, "a dataset needs `path`, `url` or `files`", f"datasets.{name}")
        if spec.get("url") is not None and spec.get("files"):
            raise InputError(source, "give either `url` or `files`, not both", f"datasets.{name}")
    return config


def _normalise_subset(config: dict[str, Any]) -> None:
    """`--config subset='{per_group: 3, seed: 0}'` reaches the config with the numbers as strings; seed
    defaults to 0 here (the schema cannot fill a default inside a key that is null by default)."""
    spec = config.get("subset")
    if isinstance(spec, dict):
        spec.setdefault("seed", 0)
        for key, value in spec.items():
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                spec[key] = int(value)


def enabled_datasets(config: dict[str, Any]) -> list[str]:
    return [name for name, spec in config["datasets"].items() if spec.get("enabled", True)]


def is_local(spec: dict[str, Any]) -> bool:
    """A dataset with `path` reads its files in place; otherwise the download rule fetches them."""
    return spec.get("path") is not None


def subset_workdir(config: dict[str, Any]) -> str | None:
    """Where a subset run works (`subset/per_group-N_seed-S`), so its results never overwrite a full run's;
    None for a full run."""
    spec = config.get("subset")
    return f"subset/per_group-{spec['per_group']}_seed-{spec['seed']}" if spec else None


def absolute_paths(config: dict[str, Any], base: Path) -> None:
    """Make the config's file paths absolute (relative to `base`), in place, before the workdir moves: data,
    downloads, the embedding cache and the model-call cache stay shared with full runs."""
    def fix(path):
        return str((base / path).resolve()) if path is not None and not Path(path).is_absolute() else path

    for key in ("resources_dir", "embeddings_dir", "llm_cache"):
        config[key] = fix(config[key])
    for spec in config["datasets"].values():
        if spec.get("path") is not None:
            spec["path"] = fix(spec["path"])
    prompts = config.get("llm", {}).get("prompts") or {}
    for name in list(prompts):
        prompts[name] = fix(prompts[name])
