"""What each run needs is declared by its system's class (membench.runs.needs) and read by the workflow."""

from __future__ import annotations

import importlib.util

import pytest

from membench.adapters.base import Adapter
from membench.errors import AdapterLoadError
from membench.runs.needs import Needs
from membench.runs.plan import needs_of_runs
from membench.runs.registry import SYSTEMS, adapter_source_files, builtin_adapters, run_needs

EMBEDS = {"dense", "hybrid", "state-aware", "action-only"}


def test_builtin_adapters_declare_embeddings_exactly_when_they_embed():
    for name in builtin_adapters():
        assert run_needs(name) == Needs(embeddings=name in EMBEDS), name


def test_the_declaration_agrees_with_the_code():
    """The declared need matches the code: an adapter declares `embeddings` iff it imports the embedding cache
    (the old guess, kept here as an oracle for the built-ins)."""
    for name in builtin_adapters():
        imports_cache = any(p.parts[-2:] == ("embedding", "cache.py") for p in adapter_source_files(name))
        assert run_needs(name).embeddings == imports_cache, name


def test_fact_runs_add_facts_to_their_base():
    assert run_needs("bm25+facts") == Needs(facts=True)
    assert run_needs("dense+facts") == Needs(embeddings=True, facts=True)


def test_memory_systems_ingest_and_say_when_they_call_a_model():
    assert run_needs("session-log") == Needs(session_logs=True)
    assert run_needs("a-mem") == Needs(session_logs=True, model_calls=True)  # its class alone: no import of a-mem
    assert all(run_needs(n) == Needs(session_logs=True) for n in ("txtai", "langmem", "llamaindex", "engram", "chroma"))
    if importlib.util.find_spec("mem0") is None:
        pytest.skip("mem0 is an optional extra (pip install -e '.[mem0]')")
    assert run_needs("mem0", {"infer": False}) == Needs(session_logs=True)
    assert run_needs("mem0", {"infer": True}) == Needs(session_logs=True, model_calls=True)


def test_the_plan_reads_every_enabled_run():
    runs = {"bm25": {"adapter": "bm25", "params": {}}, "dense": {"adapter": "dense", "params": {}},
            "log": {"adapter": "session-log", "params": {}}}
    assert needs_of_runs(runs) == {"bm25": Needs(), "dense": Needs(embeddings=True), "log": Needs(session_logs=True)}


class Declares(Adapter):
    name = "declares"
    needs = frozenset({"embeddings", "facts"})


class Misspelt(Adapter):
    name = "misspelt"
    needs = frozenset({"embedings"})


class NotASet(Adapter):
    name = "not-a-set"
    needs = "embeddings"


def test_a_plugin_declares_its_needs():
    assert run_needs(f"{__name__}:Declares") == Needs(embeddings=True, facts=True)


@pytest.mark.parametrize("cls, message", [
    ("Misspelt", r"'test_run_needs:Misspelt' declares unknown needs \['embedings'\] \(known: embeddings, "
                 r"session_logs, model_calls, facts\)"),
    ("NotASet", r"declares `needs` = 'embeddings': expected a set of names"),
])
def test_a_bad_declaration_is_a_clear_error(cls, message):
    with pytest.raises(AdapterLoadError, match=message):
        run_needs(f"{__name__}:{cls}")


def test_every_builtin_is_in_the_one_table():
    assert set(builtin_adapters()) < set(SYSTEMS) and {"mem0", "session-log"} <= set(SYSTEMS)
