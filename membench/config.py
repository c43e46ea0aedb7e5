"""Config validation beyond the JSON Schema (cross-field rules the schema cannot say plainly), and the
schema's defaults for code called without a validated config."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from membench.errors import InputError

SCHEMA = Path(__file__).resolve().parent / "config.schema.yaml"  # packaged beside this module (a wheel validates too)
DATA_FILES = ("config.schema.yaml",)  # SCHEMA: its defaults shape every validated config


def validate_config(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Validate against the schema (filling defaults in place), then check each dataset's kind and source."""
    _normalise_subset(config)
    _normalise_category_names(config)
    _normalise_errata(config)
    errors = list(_defaulting_validator()(_schema()).iter_errors(config))  # fills defaults as it goes
    if errors:
        from jsonschema.exceptions import best_match

        error = best_match(errors)
        why = f" ({error.schema['description']})" if error.validator == "pattern" and isinstance(
            error.schema, dict) and error.schema.get("description") else ""  # a pattern alone says little
        raise InputError(source, f"config does not match {SCHEMA.name}: {error.message}{why}",
                         field=".".join(map(str, error.absolute_path)) or None)
    from membench.benchmarks.registry import kinds

    for name, spec in config["datasets"].items():
        if spec["kind"] not in kinds():
            raise InputError(source, f"unknown benchmark kind {spec['kind']!r}; known: {', '.join(kinds())}",
                             f"datasets.{name}.kind")
        if spec.get("path") is None and spec.get("url") is None and not spec.get("files"):
            raise InputError(source, "a dataset needs `path`, `url` or `files`", f"datasets.{name}")
        if spec.get("url") is not None and spec.get("files"):
            raise InputError(source, "give either `url` or `files`, not both", f"datasets.{name}")
        _check_category_names(spec, source, f"datasets.{name}.category_names")
        _check_parse_options(spec, source, f"datasets.{name}")
    return config


def _check_parse_options(spec: Mapping[str, Any], source: str, field: str) -> None:
    """A key only some kinds' parsers take (`Benchmark.parse_options`: LoCoMo-Plus's `seed`) only where it is taken."""
    from membench.benchmarks.registry import BENCHMARKS

    for key in sorted({o for r in BENCHMARKS.values() for o in r.parse_options} & set(spec)):
        if key not in BENCHMARKS[spec["kind"]].parse_options:
            takers = sorted(k for k, r in BENCHMARKS.items() if key in r.parse_options)
            raise InputError(source, f"kind {spec['kind']!r} takes no `{key}` (kind {', '.join(takers)} does)",
                             field=f"{field}.{key}")


def _check_category_names(spec: Mapping[str, Any], source: str, field: str) -> None:
    """`category_names` only where the kind has numbered categories (LoCoMo), one distinct name each."""
    from membench.benchmarks.registry import supporting

    names = spec.get("category_names")
    if names is None:
        return
    if spec["kind"] not in supporting("name_categories"):
        raise InputError(source, f"kind {spec['kind']!r} has no numbered categories to name (LoCoMo has)", field=field)
    if len(set(names.values())) < len(names):
        raise InputError(source, f"two categories share a name: {names}", field=field)


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    """The schema, read with libyaml where PyYAML has it (every Snakemake start reads it: 5 ms, not 50)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(SCHEMA.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader


def _defaulting_validator():
    """The schema's validator, extended to fill each missing property that has a default as it validates, so
    defaults are validated too (jsonschema's FAQ recipe, as `snakemake.utils.validate` uses it)."""
    from jsonschema import validators

    base = validators.validator_for(_schema())
    check_properties = base.VALIDATORS["properties"]

    def properties_with_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(base, {"properties": properties_with_defaults})


def _fill_defaults(node: Mapping[str, Any], value: Any) -> Any:
    """Give every missing property with a default a copy of it, recursively (as snakemake's ``validate``
    does), so a section given as ``{}`` reads exactly as the validated config has it."""
    if isinstance(value, dict):
        for key, sub in (node.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                _fill_defaults(sub, value[key])
    return value


def section_keys(name: str) -> set[str]:
    """The keys the schema allows in the top-level section ``name``."""
    return set(_schema()["properties"][name].get("properties") or {})


def config_section(config: Mapping[str, Any] | None, name: str, source: str = "config",
                   section: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A copy of the top-level section ``name`` (or of ``section``, read as one), with the schema's defaults
    filled in and checked against the schema.

    The workflow's config is already validated, so there this changes nothing; it lets code called directly
    (tests, notebooks) read the same defaults, which are written only in the schema.
    """
    node = _schema()["properties"][name]
    given = section if section is not None else (config or {}).get(name)
    value = _fill_defaults(node, copy.deepcopy(dict(given or {})))
    from jsonschema.validators import validator_for

    errors = sorted(validator_for(_schema())(node).iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise InputError(source, f"config does not match {SCHEMA.name}: {errors[0].message}",
                         field=".".join([name, *map(str, errors[0].absolute_path)]))
    return value


def _normalise_category_names(config: dict[str, Any]) -> None:
    """YAML reads `category_names: {4: single-hop}` with number keys; the schema names them as strings."""
    for spec in (config.get("datasets") or {}).values():
        names = spec.get("category_names") if isinstance(spec, dict) else None
        if isinstance(names, dict):
            spec["category_names"] = {str(k): v for k, v in names.items()}


def _normalise_subset(config: dict[str, Any]) -> None:
    """`--config subset='{per_group: 3, seed: 0}'` reaches the config with the numbers as strings; seed
    defaults to 0 here (the schema cannot fill a default inside a key that is null by default)."""
    spec = config.get("subset")
    if isinstance(spec, dict):
        spec.setdefault("seed", 0)
        for key, value in spec.items():
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                spec[key] = int(value)


def _normalise_errata(config: dict[str, Any]) -> None:
    """`errata: apply` (or `published`, e.g. from `--config errata=apply`) is short for `errata: {evidence: ...}`."""
    if isinstance(config.get("errata"), str):
        config["errata"] = {"evidence": config["errata"]}


def enabled_datasets(config: dict[str, Any]) -> list[str]:
    """The datasets a run uses; none is an error (the run would end with an empty report)."""
    names = [name for name, spec in config["datasets"].items() if spec.get("enabled", True)]
    if not names:
        raise InputError("config", "every dataset is disabled (`enabled: false`) or none is given: there is "
                         "nothing to run", field="datasets")
    return names


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
