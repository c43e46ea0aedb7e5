"""Prices from genai-prices' bundled table for models llm.prices does not list: exact figures, config wins,
an unknown model stays unpriced, the source is recorded, and nothing is fetched from the network."""

from __future__ import annotations

import threading
from decimal import Decimal

import genai_prices
import pytest
from genai_prices import data_snapshot

from membench.errors import InputError
from membench.llm.pricing import CostMeter
from membench.llm.section import from_config
from membench.llm.pricing import table_price

PROMPT, COMPLETION = 1200, 345
SOURCE = f"genai-prices {genai_prices.__version__}"
# Read by hand from genai_prices/data.py (0.2.3), provider openai, model gpt-4o-mini: input_mtok 0.15,
# output_mtok 0.6 (US dollars per million tokens). 1200 * 0.15 / 1e6 + 345 * 0.6 / 1e6:
GPT_4O_MINI_COST = Decimal("0.000387")


def test_a_real_model_without_config_price_costs_what_genai_prices_says():
    meter = CostMeter({}, None)
    expected = genai_prices.calc_price(genai_prices.Usage(input_tokens=PROMPT, output_tokens=COMPLETION),
                                       "gpt-4o-mini").total_price
    assert expected == GPT_4O_MINI_COST
    assert meter.price("gpt-4o-mini", PROMPT, COMPLETION) == GPT_4O_MINI_COST
    assert meter.record_call("judge", "gpt-4o-mini", PROMPT, COMPLETION) == float(GPT_4O_MINI_COST)
    summary = meter.summary()
    assert summary["spent_usd"] == float(GPT_4O_MINI_COST) and summary["unpriced_models"] == []
    assert summary["prices"] == {"gpt-4o-mini": {"input_per_1m": 0.15, "output_per_1m": 0.6, "source": SOURCE,
                                                 "matched": "openai:gpt-4o-mini", "tiered": False}}


def test_config_price_overrides_genai_prices():
    meter = CostMeter({"gpt-4o-mini": {"input_per_1m": 1.0, "output_per_1m": 2.0}}, None)
    assert meter.record_call("judge", "gpt-4o-mini", PROMPT, COMPLETION) == pytest.approx(0.00189)
    assert meter.price("gpt-4o-mini", PROMPT, COMPLETION) == Decimal("0.00189")  # 1200 * 1 + 345 * 2, per 1e6
    assert meter.summary()["prices"] == {"gpt-4o-mini": {"input_per_1m": 1.0, "output_per_1m": 2.0,
                                                         "source": "config"}}


@pytest.mark.parametrize("model", ["fake-model", "no-such-model-anywhere"])
def test_a_model_nobody_prices_stays_unpriced(model):
    meter = CostMeter({}, None)
    assert not meter.is_priced(model)
    assert meter.record_call("judge", model, PROMPT, COMPLETION) == 0.0
    summary = meter.summary()
    assert summary["unpriced_models"] == [model] and summary["prices"] == {} and summary["spent_usd"] == 0.0


def test_a_local_server_gets_no_table_price():
    """With a base_url genai-prices looks only at the provider serving it: none serves 127.0.0.1."""
    assert table_price("gpt-4o-mini", "http://127.0.0.1:8000/v1") is None
    assert table_price("gpt-4o-mini", "https://api.openai.com/v1").matched == "openai:gpt-4o-mini"
    assert not CostMeter({}, None, api_url="http://127.0.0.1:8000/v1").is_priced("gpt-4o-mini")
    assert not CostMeter({}, None, price_table=False).is_priced("gpt-4o-mini")


def test_tiered_prices_use_genai_prices_cliff():
    """gemini-2.5-pro costs more per token above 200k prompt tokens; the meter charges what the table says."""
    price = table_price("gemini-2.5-pro")
    assert price is not None and price.tiered
    meter = CostMeter({}, None)
    for prompt in (1000, 250_000):
        usage = genai_prices.Usage(input_tokens=prompt, output_tokens=COMPLETION)
        assert meter.price("gemini-2.5-pro", prompt, COMPLETION) == \
            genai_prices.calc_price(usage, "gemini-2.5-pro").total_price
    assert meter.price("gemini-2.5-pro", 250_000, 0) / 250_000 > meter.price("gemini-2.5-pro", 1000, 0) / 1000


def test_a_budget_needs_a_price_from_config_or_genai_prices(tmp_path, monkeypatch):
    monkeypatch.setenv("MB_PRICING_TEST_KEY", "sk-pricing-test")
    llm = {"prices": {}, "budget_usd": 1, "api_key_env": "MB_PRICING_TEST_KEY"}
    client = from_config({"llm": {"model": "gpt-4o-mini", **llm}}, tmp_path / "a.jsonl", env={})
    assert client.meter.is_priced("gpt-4o-mini")
    client.close()
    with pytest.raises(InputError, match="a budget needs a price for model 'no-such-model-anywhere'"):
        from_config({"llm": {"model": "no-such-model-anywhere", **llm}}, tmp_path / "b.jsonl", env={})
    with pytest.raises(InputError, match="a budget needs a price for model 'gpt-4o-mini'"):  # served locally
        from_config({"llm": {"model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1", **llm}},
                    tmp_path / "c.jsonl", env={})


def test_only_the_bundled_table_is_used(monkeypatch):
    """No update thread, no HTTP request; a snapshot fetched at run time is refused, not silently used."""
    def no_network(*args, **kwargs):
        raise AssertionError("genai-prices tried to fetch prices")

    monkeypatch.setattr(genai_prices.update_prices.httpx2, "get", no_network)
    assert CostMeter({}, None).price("gpt-4o-mini", PROMPT, COMPLETION) == GPT_4O_MINI_COST
    assert not any(t.name == "genai_prices:update" for t in threading.enumerate())
    assert data_snapshot.get_snapshot().from_auto_update is False
    fetched = data_snapshot.DataSnapshot(data_snapshot.get_snapshot().providers, from_auto_update=True)
    monkeypatch.setattr(data_snapshot, "_custom_snapshot", fetched)
    with pytest.raises(RuntimeError, match="bundled table"):
        table_price("gpt-4o-mini")
