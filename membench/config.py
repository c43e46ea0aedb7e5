"""Config validation beyond the JSON Schema: cross-field rules the schema cannot say plainly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from membench.errors import InputError

SCHEMA = Path(__file__).resolve().parent.parent / "workflow" / "schemas" / "config.schema.yaml"


def validate_config(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Validate against the schema (filling defaults in place), then check each dataset's source."""
    from snakemake.utils import validate

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


def enabled_datasets(config: dict[str, Any]) -> list[str]:
    return [name for name, spec in config["datasets"].items() if spec.get("enabled", True)]


def is_local(spec: dict[str, Any]) -> bool:
    """A dataset with `path` reads its files in place; otherwise the download rule fetches them."""
    return spec.get("path") is not None
