"""`refs: withheld` (membench.memory.withheld): a run that returns its sources is scored by attribution alone, and
the rule is checked against the refs it withheld: counts on hand-made hits, and a real run on LoCoMo whose results
are turns verbatim, where attribution must give every ref back."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import ingested_opening
from membench.benchmarks.registry import benchmark
from membench.embedding.cache import shared_cache
from membench.memory.attribution import Attribution
from membench.memory.protocol import Hit
from membench.memory.run import run_memory
from membench.memory.withheld import WithheldRefs
from membench.runs.registry import resolve


def test_precision_and_recall_against_the_withheld_refs_by_hand():
    audit = WithheldRefs()
    hits = [Hit(("D1:1", "D1:2"), 0.9, "a fact"), Hit(("D1:3",), 0.8, ""), Hit((), 0.7, "no source"),
            Hit(("D1:4",), 0.6, "another fact")]
    stripped, truth = audit.strip(hits)
    assert [h.refs for h in stripped] == [()] * 4 and [h.text for h in stripped] == [h.text for h in hits]
    attributed = [Hit(("D1:1",), 0.9, "a fact", True), Hit((), 0.8, "", True), Hit(("D1:9",), 0.7, "no source", True),
                  Hit(("D1:4", "D1:5", "D1:6"), 0.6, "another fact", True)]
    audit.compare(attributed, truth)
    # withheld {D1:1, D1:2} + {D1:4} = 3; given back {D1:1} + {D1:4, D1:5, D1:6} = 4; shared D1:1, D1:4 = 2
    assert audit.as_dict() == {"hits": 2, "hits_without_text": 1, "refs_withheld": 3, "refs_attributed": 4,
                               "refs_shared": 2, "precision": 0.5, "recall": 0.6667}
    assert WithheldRefs().as_dict()["precision"] is None  # nothing to measure is not a 0


@pytest.mark.data
def test_results_that_are_turns_verbatim_are_attributed_back_to_themselves(locomo_dir, tmp_path):
    """The session-log reader returns each turn's own text with its ref. Withheld, every ref comes back (precision
    and recall 1.0: a turn's text covers all its words and is its own nearest embedding), so the run is the by-id
    run item for item; only the `attributed` flag tells them apart."""
    folder = ingested_opening(locomo_dir, tmp_path / "data", sessions=3)
    cache = shared_cache(None)
    runs, accs = {}, {}
    for withhold in (False, True):
        runs[withhold], accs[withhold] = run_memory(benchmark("locomo"), folder, resolve("session-log")(), 10,
                                                    tmp_path / f"store-{withhold}", cache, name="log",
                                                    attribution=Attribution(), withhold_refs=withhold)
    audit = accs[True].attribution["against_withheld_refs"]
    searches = accs[True].searches
    assert searches == 25 and audit["hits"] == searches * 10 and audit["hits_without_text"] == 0
    assert audit["refs_withheld"] == audit["refs_attributed"] == audit["refs_shared"] == searches * 10
    assert audit["precision"] == audit["recall"] == 1.0
    assert accs[True].attribution["hits_attributed"] == searches * 10 and accs[False].attribution["hits_attributed"] == 0
    assert runs[True]["attributed"].all() and "attributed" not in runs[False]
    assert runs[True].drop(columns="attributed").equals(runs[False])
    with pytest.raises(ValueError, match="refs: withheld scores the run by attribution, which is off"):
        run_memory(benchmark("locomo"), folder, resolve("session-log")(), 10, tmp_path / "off", cache, name="log",
                   withhold_refs=True)
