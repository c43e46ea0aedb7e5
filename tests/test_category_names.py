"""LoCoMo's category names: the default is the parser's mapping (written once more as the schema default), the
config can rename them, and every table shows the raw number beside the name."""

from __future__ import annotations

import pandas as pd
import pytest

from membench.analysis.aggregate import SIGNIFICANCE_COLUMNS, summarize_dataset
from membench.benchmarks.registry import benchmark
from membench.config import validate_config
from membench.benchmarks.locomo.parse import CATEGORIES
from membench.errors import InputError
from membench.report.results import results_section
from membench.scoring.tables import Gold
from membench.stages import parse

# mem0's reading of the numbers (mem0ai/mem0 issue #2609), one of the disputed alternatives
MEM0 = {"1": "single-hop", "2": "temporal", "3": "multi-hop", "4": "open-domain", "5": "adversarial"}


def config_with(**spec) -> dict:
    return {"datasets": {"locomo": {"kind": "locomo", "path": "x", **spec}}}


def test_default_is_the_parsers_mapping_and_only_for_locomo():
    config = validate_config({"datasets": {"locomo": {"kind": "locomo", "path": "x"},
                                           "procedural": {"kind": "procedural", "path": "y"}}})
    assert config["datasets"]["locomo"]["category_names"] == {str(k): v for k, v in CATEGORIES.items()}
    assert config["datasets"]["locomo"]["category_names"] == {
        "1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
    assert "category_names" not in config["datasets"]["procedural"]


def test_an_override_with_number_keys_is_read_as_given():
    names = {int(k): v for k, v in MEM0.items()}  # YAML reads `{1: single-hop, ...}` with number keys
    assert validate_config(config_with(category_names=names))["datasets"]["locomo"]["category_names"] == MEM0


@pytest.mark.parametrize("spec, message", [
    ({"category_names": {"1": "a", "2": "b", "3": "c", "4": "d"}}, "'5' is a required property"),
    ({"category_names": {**MEM0, "6": "other"}}, "Additional properties are not allowed ('6' was unexpected)"),
    ({"category_names": {**MEM0, "4": "temporal"}}, "two categories share a name"),
    ({"kind": "procedural", "category_names": MEM0}, "kind 'procedural' has no numbered categories to name"),
])
def test_a_bad_override_names_the_key(spec, message):
    with pytest.raises(InputError) as err:
        validate_config(config_with(**spec), source="my.yaml")
    assert err.value.path == "my.yaml" and err.value.field == "datasets.locomo.category_names"
    assert message in err.value.detail


def group_table(locomo_dir, tmp_path, names) -> tuple[pd.DataFrame, str]:
    """Parse the real LoCoMo with `names`, score a run that finds nothing, and render the report's tables:
    the questions table and the results section."""
    parse.run(benchmark("locomo"), locomo_dir, tmp_path, category_names=names)
    gold = Gold.load(tmp_path)
    empty = pd.DataFrame({"question_id": [], "rank": [], "item_id": [], "score": [], "granularity": []})
    scores = benchmark("locomo").score(empty.astype({"rank": "int64", "score": "float64"}), gold)
    summary = summarize_dataset("locomo", {"bm25": scores}, resamples=100, seed=0)
    section = results_section("locomo", benchmark("locomo"), summary, pd.DataFrame(columns=SIGNIFICANCE_COLUMNS), {}, "bm25")
    return gold.questions, section


def test_report_shows_the_number_beside_the_default_name(locomo_dir, tmp_path):
    questions, section = group_table(locomo_dir, tmp_path, None)
    assert questions.set_index("question_id").loc["conv-26_q0", "question_type"] == "temporal"  # category 2
    # n: the questions each category holds, less category 3's four with empty evidence (left out)
    header = next(line for line in section.splitlines() if line.startswith("| adapter | 1 "))
    assert header == ("| adapter | 1 multi-hop (n=282) | 2 temporal (n=321) | 3 open-domain (n=92) | "
                      "4 single-hop (n=841) | 5 adversarial (n=446) |")


def test_an_override_renames_every_question(locomo_dir, tmp_path):
    questions, section = group_table(locomo_dir, tmp_path, MEM0)
    assert questions.groupby("category").question_type.unique().map(list).to_dict() == {
        1: ["single-hop"], 2: ["temporal"], 3: ["multi-hop"], 4: ["open-domain"], 5: ["adversarial"]}
    assert ("| adapter | 1 single-hop (n=282) | 2 temporal (n=321) | 3 multi-hop (n=92) | 4 open-domain (n=841) | "
            "5 adversarial (n=446) |") in section
