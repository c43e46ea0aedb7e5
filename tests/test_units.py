"""Retrieval units: LoCoMo turns as upstream indexes them (default) or plain text; dates spelled as upstream."""

from __future__ import annotations

import json
import re

from membench.benchmarks.locomo.dates import locomo_date, locomo_date_text
from membench.stages.ingest import ingest
from membench.sessions.reader import SessionStore


def test_every_locomo_date_is_spelled_back_as_upstream(locomo_dir):
    data = json.loads((locomo_dir / "locomo10.json").read_text(encoding="utf-8"))
    dates = [v for conv in data for k, v in conv["conversation"].items() if re.fullmatch(r"session_\d+_date_time", k)]
    assert len(dates) == 288
    assert all(locomo_date_text(locomo_date(d)) == d for d in dates)
    assert locomo_date_text("2023-05-08T00:05:00") == "12:05 am on 8 May, 2023"
    assert locomo_date_text("2023-05-08T12:30:00") == "12:30 pm on 8 May, 2023"


def test_locomo_documents_upstream_and_plain(ingested, tmp_path):
    store = SessionStore(ingested["locomo"])
    query, hay = next(store.queries())
    docs = store.haystack(hay).documents("turn")
    assert docs[0].text == '(1:56 pm on 8 May, 2023) Caroline said, "Hey Mel! Good to see you! How have you been?"'
    image = next(d.text for d in docs if "[shares" in d.text)
    assert image.endswith('thankful for all the support." [shares a photo of a dog walking past a wall with a '
                          'painting of a woman]')
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in ("questions", "turns", "haystacks"):
        (plain / f"{name}.parquet").write_bytes((ingested["locomo"] / f"{name}.parquet").read_bytes())
    (plain / "normalization.json").write_bytes((ingested["locomo"] / "normalization.json").read_bytes())
    ingest(plain, plain, units="plain")
    plain_docs = SessionStore(plain).haystack(hay).documents("turn")
    assert plain_docs[0].text == "Hey Mel! Good to see you! How have you been?"
    assert [d.item_id for d in plain_docs] == [d.item_id for d in docs]
