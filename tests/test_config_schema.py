"""The config's schema check: the defaults it fills equal Snakemake's own `validate`'s, and errors name the field."""

from __future__ import annotations

import copy

import pytest
import yaml
from snakemake.utils import validate as snakemake_validate

from membench.config import SCHEMA, _schema, validate_config
from membench.errors import InputError
from conftest import REPO


def shipped_config() -> dict:
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    local = yaml.safe_load((REPO / "config" / "shared-data.yaml").read_text(encoding="utf-8"))["datasets"]
    for name, spec in local.items():  # merged entry by entry, as Snakemake merges --configfile
        config["datasets"][name] = {**config["datasets"].get(name, {}), **spec}
    return config


def test_defaults_equal_snakemakes_validate():
    """Ours fills what Snakemake's `validate` fills, down into each dataset's entry (`additionalProperties`)."""
    ours, theirs = shipped_config(), shipped_config()
    validate_config(ours)
    snakemake_validate(theirs, str(SCHEMA))
    assert ours == theirs
    assert ours["datasets"]["locomo"]["enabled"] is True and ours["datasets"]["locomo"]["units"] == "upstream"


def schema_defaults(node: dict, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """Every scalar default the schema states under fixed keys (`properties`), by its path."""
    found = {path: node["default"]} if "default" in node and not isinstance(node["default"], dict) else {}
    for key, child in node.get("properties", {}).items():
        found.update(schema_defaults(child, path + (key,)))
    return found


def scalars(config: dict, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    out = {}
    for key, value in config.items():
        out.update(scalars(value, path + (key,)) if isinstance(value, dict) else {path + (key,): value})
    return out


def test_config_yaml_is_checked_against_the_schema_defaults():
    """The schema is the one source of defaults; config.yaml shows each setting to a reader, and every setting it
    writes under a fixed key must equal the schema's default (entries of `datasets`, `adapters` and `llm.prices`
    are choices, not defaults, and the schema's map entries have no fixed keys)."""
    defaults = schema_defaults(_schema())
    written = scalars(yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8")))
    shown = {path: value for path, value in written.items() if path in defaults}
    assert len(shown) >= 40
    assert {path: value for path, value in shown.items() if value != defaults[path]} == {}
    unchecked = {path[:2] if path[0] == "llm" else path[:1] for path in written if path not in defaults}
    assert unchecked == {("datasets",), ("adapters",), ("llm", "prices")}, unchecked


def test_filled_defaults_are_copies():
    """The schema is read once per process: a config that edits a filled-in default must not edit the next
    config's, nor the schema."""
    before = copy.deepcopy(_schema())
    first = validate_config({"datasets": {"a": {"kind": "locomo", "path": "x"}}})
    for value in first.values():
        if isinstance(value, dict):
            value["edited"] = True
        elif isinstance(value, list):
            value.append("edited")
    second = validate_config({"datasets": {"a": {"kind": "locomo", "path": "x"}}})
    assert _schema() == before
    assert not any("edited" in value for value in second.values() if isinstance(value, (dict, list)))


@pytest.mark.parametrize("config, field, message", [
    ({"retrieval": {"depth": "deep"}}, "retrieval.depth", "'deep' is not of type 'integer'"),
    ({"datasets": {"x": {"kind": "locomo", "path": "p", "unit": "plain"}}}, "datasets.x",
     "Additional properties are not allowed ('unit' was unexpected)"),
    ({"colour": 1}, None, "Additional properties are not allowed ('colour' was unexpected)"),
])
def test_errors_name_the_field(config, field, message):
    with pytest.raises(InputError) as err:
        validate_config(config, source="my.yaml")
    assert err.value.path == "my.yaml" and err.value.field == field
    assert err.value.detail == f"config does not match config.schema.yaml: {message}"


@pytest.mark.parametrize("name", ["locomo", "longmemeval-s-fragment", "lme_v2.1", "_draft", "2024"])
def test_safe_names_are_accepted(name):
    validate_config({"datasets": {name: {"kind": "locomo", "path": "p"}}, "adapters": {name: {"adapter": "bm25"}}})


@pytest.mark.parametrize("name", ["../x", "../../x", "a/b", ".hidden", "..", "", "a b", "bm25+facts", "a\\b"])
@pytest.mark.parametrize("section", ["datasets", "adapters"])
def test_names_that_could_leave_results_are_refused(section, name):
    """A dataset or run name becomes a folder or file name under results/ and logs/: `../x` would write outside."""
    config = {"datasets": {"d": {"kind": "locomo", "path": "p"}}, "adapters": {"bm25": {}}}
    config[section] = {name: {"kind": "locomo", "path": "p"} if section == "datasets" else {}}
    with pytest.raises(InputError) as err:
        validate_config(config)
    assert err.value.field == section
    assert err.value.detail.startswith(f"config does not match config.schema.yaml: {name!r} does not match ")
    assert err.value.detail.endswith("letters, digits, '-', '_' and '.', not leading '.', so that no name "
                                     "reaches outside results/)")


@pytest.mark.parametrize("name", ["../x", "a/../../x", "/etc/x", "a//b", "a/./b", "..", ".", "a\\b"])
def test_download_file_names_stay_in_their_folder(name):
    with pytest.raises(InputError) as err:
        validate_config({"datasets": {"d": {"kind": "locomo", "files": [{"url": "https://h/f.json", "name": name}]}}})
    assert err.value.field == "datasets.d.files.0.name"


def test_a_download_may_name_a_file_by_its_path_inside_the_folder():
    """BEAM's chats share file names: `1/chat.json`, `2/chat.json` (membench.fetch.download takes the same)."""
    config = validate_config({"datasets": {"d": {"kind": "beam", "files": [
        {"url": "https://h/1/chat.json", "name": "1/chat.json"}, {"url": "https://h/2/chat.json", "name": "2/chat.json"}]}}})
    assert [f["name"] for f in config["datasets"]["d"]["files"]] == ["1/chat.json", "2/chat.json"]


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "config").glob("*.yaml")))
def test_each_shipped_configfile_validates_over_config_yaml(name):
    """A config file as the command in its own header passes it (with the files it names before it, e.g.
    config/shared-data.yaml), merged over config.yaml as Snakemake merges them."""
    import re
    from snakemake.utils import update_config

    text = (REPO / "config" / name).read_text(encoding="utf-8")
    command = re.search(r"--configfile ((?:config/\S+\.yaml ?)+)", text)
    files = command.group(1).split() if command else [f"config/{name}"]
    assert f"config/{name}" in files
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    for path in files:
        update_config(config, yaml.safe_load((REPO / path).read_text(encoding="utf-8")))
    assert validate_config(config, name)["datasets"]
