"""Cost meter and hard budget for model calls.

Prices are US dollars per million tokens, per model. They come from the config (``llm.prices``:
``{"gpt-4o-mini": {"input_per_1m": 0.15, "output_per_1m": 0.6}}``), which always wins, and else from the
price table bundled with the installed genai-prices package (:func:`table_price`), resolved once per model
and meter. Only the bundled table is read: genai-prices fetches newer prices only when its ``UpdatePrices``
is started, which membench never does, and a price that came from such a fetch is refused. The summary's
``prices`` says which price each model was charged at and where it came from (``"config"`` or
``"genai-prices <version>"``). Money is summed exactly (``Decimal``), so "the budget is reached after N
calls" means exactly that.

What stays here, because genai-prices does not do it: the budget and its in-flight estimate, the per-stage
counters, the prior spend read from the call cache, and the config prices that override the table.

Budget rule. Before every paid HTTP attempt the client calls :meth:`CostMeter.check`; it raises
:class:`BudgetExceeded` once ``spent >= budget``. With several calls in flight the meter also counts
them at the average cost of the calls completed so far, and refuses a new call when ``spent + in-flight
estimate >= budget``; before the first call completes there is no estimate, so the overshoot is bounded
by the calls started in that first wave (at most ``concurrency - 1`` beyond the budget). Cache hits cost
nothing and are always served, also after the budget is reached.

Budget scope. The budget caps *all* spend recorded in the call cache the client uses: the client adds
the cost of the paid calls already in the cache file (priced with the current price table) as "prior"
spend when it opens. So rerunning a stopped stage with the same budget makes no new paid call (it only
serves cache hits); raise the budget to continue. ``spent_usd`` in the summary is this run's spend,
``prior_usd`` the earlier runs', ``total_usd`` their sum.

Attempts that end in an HTTP error, a timeout or a connection error are counted as retries but not as
paid calls (providers do not bill them; a timed-out request might be billed by some -- unknowable here).
A model that neither the config nor genai-prices prices costs 0 and is listed under ``unpriced_models``;
``from_config`` refuses a budget for such a model. With an ``api_url`` (the client's ``base_url``)
genai-prices only looks at the provider serving that URL, so a model on a local server stays unpriced.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

__all__ = ["CostMeter", "BudgetExceeded", "STAGE_FIELDS", "TablePrice", "table_price"]

_MILLION = Decimal(1_000_000)
STAGE_FIELDS = ("requests", "calls", "cache_hits", "retries", "malformed", "failures", "budget_stopped",
                "prompt_tokens", "completion_tokens", "cost_usd")


def _money(x: Decimal) -> float:
    return float(round(x, 6))


def _fmt_usd(x: float | Decimal) -> str:
    x = float(x)
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.6f}".rstrip("0").rstrip(".") or "0"


@dataclass(frozen=True)
class TablePrice:
    """genai-prices' price of one model: its per-million figures (the base tier if tiered) for the summary,
    and ``model_price`` (a ``genai_prices.types.ModelPrice``) for the exact cost of a call."""

    input_per_1m: Decimal
    output_per_1m: Decimal
    source: str  # "genai-prices <version>"
    matched: str  # "<provider>:<model id>" the name was matched to
    tiered: bool
    model_price: Any

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal:
        from genai_prices import Usage

        usage = Usage(input_tokens=int(prompt_tokens), output_tokens=int(completion_tokens))
        return self.model_price.calc_price(usage)["total_price"]


def table_price(model: str, api_url: str | None = None, at: datetime | None = None) -> TablePrice | None:
    """The price genai-prices' bundled table gives ``model`` at ``at`` (default now), or None if it has none.

    ``api_url``: the provider's base URL; genai-prices then matches the model within the provider serving it
    (none for a local server), else it guesses the provider from the model name.
    """
    import genai_prices  # deferred: its table is large and most runs make no model call

    try:
        calc = genai_prices.calc_price(genai_prices.Usage(input_tokens=0, output_tokens=0), str(model),
                                       provider_api_url=api_url or None,
                                       genai_request_timestamp=at or datetime.now(timezone.utc))
    except LookupError:
        return None
    if calc.auto_update_timestamp is not None:
        raise RuntimeError("genai-prices is serving prices fetched at run time; membench uses only its bundled table")
    mp = calc.model_price
    inp, out = mp.input_mtok, mp.output_mtok
    tiered = hasattr(inp, "base") or hasattr(out, "base")
    inp, out = getattr(inp, "base", inp), getattr(out, "base", out)
    return TablePrice(Decimal(inp or 0), Decimal(out or 0), f"genai-prices {genai_prices.__version__}",
                      f"{calc.provider.id}:{calc.model.id}", tiered, mp)


class BudgetExceeded(RuntimeError):
    """The budget is used up; no new paid call was made.

    ``results`` is set by ``LLMClient.complete_many``: the replies in input order, ``None`` for the
    requests that were not made.
    """

    def __init__(self, budget_usd: float, spent_usd: float, calls: int, results: list | None = None,
                 prior_usd: float = 0.0):
        self.budget_usd = budget_usd
        self.spent_usd = spent_usd  # this run
        self.prior_usd = prior_usd  # earlier runs, from the cache ledger
        self.calls = calls  # paid calls in this run
        self.results = results
        super().__init__(self.message)

    @property
    def message(self) -> str:
        spent = f"spent ${_fmt_usd(self.spent_usd)} in this run"
        if self.prior_usd:
            spent += f" + ${_fmt_usd(self.prior_usd)} recorded earlier in the cache"
        return (f"budget of ${_fmt_usd(self.budget_usd)} reached after {self.calls} calls ({spent}); "
                f"rerun with a higher budget to continue — cached calls are not repaid")


class CostMeter:
    """Counts requests, paid calls, cache hits, retries, tokens and money per stage; enforces a budget."""

    def __init__(self, prices: Mapping[str, Mapping[str, float]] | None = None, budget_usd: float | None = None,
                 *, api_url: str | None = None, price_table: bool = True):
        """``prices``: the config's price table, which wins; models it lacks are priced from genai-prices
        (for the provider at ``api_url``, if given) unless ``price_table`` is False."""
        self.api_url = api_url
        self._use_table = price_table
        self._table: dict[str, TablePrice | None] = {}
        self._priced_at = datetime.now(timezone.utc)  # one price per model for the meter's whole life
        self.prices: dict[str, tuple[Decimal, Decimal]] = {}
        for model, p in (prices or {}).items():
            try:
                inp = Decimal(str(p.get("input_per_1m", 0)))
                out = Decimal(str(p.get("output_per_1m", 0)))
            except Exception as exc:  # noqa: BLE001
                raise ValueError(f"price of model {model!r} must be numbers: {exc}") from exc
            if inp < 0 or out < 0:
                raise ValueError(f"price of model {model!r} must not be negative")
            self.prices[str(model)] = (inp, out)
        if budget_usd is not None and float(budget_usd) < 0:
            raise ValueError("budget_usd must not be negative")
        self.budget_usd = None if budget_usd is None else Decimal(str(budget_usd))
        self._lock = threading.Lock()
        self._stages: dict[str, dict[str, Any]] = {}
        self._spent = Decimal(0)
        self._paid_calls = 0
        self._prior = Decimal(0)
        self._prior_calls = 0
        self._in_flight = 0
        self._unpriced: set[str] = set()
        self.budget_reached = False

    # ------------------------------------------------------------------ helpers
    def _stage(self, stage: str) -> dict[str, Any]:
        st = self._stages.get(stage)
        if st is None:
            st = {f: 0 for f in STAGE_FIELDS}
            st["cost_usd"] = Decimal(0)
            self._stages[stage] = st
        return st

    def _table_price(self, model: str) -> TablePrice | None:
        if model in self.prices or not self._use_table:
            return None
        if model not in self._table:  # a race only looks the same model up twice
            self._table[model] = table_price(model, self.api_url, self._priced_at)
        return self._table[model]

    def is_priced(self, model: str) -> bool:
        """Whether calls to ``model`` cost money here: a config price, or one from genai-prices."""
        return model in self.prices or self._table_price(model) is not None

    def price(self, model: str, prompt_tokens: int, completion_tokens: int) -> Decimal:
        p = self.prices.get(model)
        if p is not None:
            return (Decimal(int(prompt_tokens)) * p[0] + Decimal(int(completion_tokens)) * p[1]) / _MILLION
        table = self._table_price(model)
        return Decimal(0) if table is None else table.cost(prompt_tokens, completion_tokens)

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return _money(self._spent)

    @property
    def total_usd(self) -> float:
        """Prior (cache ledger) + this run."""
        with self._lock:
            return _money(self._prior + self._spent)

    def add_prior(self, entries) -> float:
        """Count paid calls recorded by earlier runs (cache lines) against the budget; returns their cost.

        A line counts when it carries a reply (``response_text`` not None) -- ok or malformed alike.
        """
        cost, calls = Decimal(0), 0
        for e in entries:
            if e.get("response_text") is None:
                continue
            usage = e.get("usage") or {}
            cost += self.price(str(e.get("model", "")), usage.get("prompt_tokens") or 0,
                               usage.get("completion_tokens") or 0)
            calls += 1
        with self._lock:
            self._prior += cost
            self._prior_calls += calls
        return float(cost)

    @property
    def paid_calls(self) -> int:
        with self._lock:
            return self._paid_calls

    # ------------------------------------------------------------------ budget
    def check(self, stage: str = "default") -> None:
        """Reserve a slot for one paid call, or raise :class:`BudgetExceeded`.

        Every successful ``check`` must be followed by exactly one :meth:`record_call` or :meth:`release`.
        """
        with self._lock:
            if self.budget_usd is not None:
                total = self._prior + self._spent
                n = self._prior_calls + self._paid_calls
                avg = total / n if n else Decimal(0)
                if total >= self.budget_usd or total + self._in_flight * avg >= self.budget_usd:
                    if total >= self.budget_usd:
                        self.budget_reached = True
                    raise BudgetExceeded(float(self.budget_usd), _money(self._spent), self._paid_calls,
                                         prior_usd=_money(self._prior))
            self._in_flight += 1

    def release(self) -> None:
        """Give back a reserved slot (the attempt produced no billable completion)."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)

    # ------------------------------------------------------------------ counting
    def record_call(self, stage: str, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """A paid completion came back (whatever its content). Returns its cost in USD."""
        cost = self.price(model, prompt_tokens, completion_tokens)
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            st = self._stage(stage)
            st["calls"] += 1
            st["prompt_tokens"] += int(prompt_tokens)
            st["completion_tokens"] += int(completion_tokens)
            st["cost_usd"] += cost
            self._spent += cost
            self._paid_calls += 1
            if not self.is_priced(model):
                self._unpriced.add(model)
            if self.budget_usd is not None and self._prior + self._spent >= self.budget_usd:
                self.budget_reached = True
        return float(cost)

    def _bump(self, stage: str, field: str, n: int = 1) -> None:
        with self._lock:
            self._stage(stage)[field] += n

    def record_request(self, stage: str) -> None:
        """One logical request (cached or not)."""
        self._bump(stage, "requests")

    def record_hit(self, stage: str) -> None:
        self._bump(stage, "cache_hits")

    def record_retry(self, stage: str) -> None:
        self._bump(stage, "retries")

    def record_malformed(self, stage: str) -> None:
        self._bump(stage, "malformed")

    def record_failure(self, stage: str) -> None:
        self._bump(stage, "failures")

    def record_budget_stop(self, stage: str) -> None:
        self._bump(stage, "budget_stopped")
        with self._lock:
            self.budget_reached = True

    def stage(self, stage: str) -> dict[str, Any]:
        """Counters of one stage (cost as float USD)."""
        with self._lock:
            st = dict(self._stage(stage))
        st["cost_usd"] = _money(st["cost_usd"])
        return st

    # ------------------------------------------------------------------ report
    def summary(self) -> dict[str, Any]:
        """A dict for the report's cost table::

            {"budget_usd": float | None, "spent_usd": float (this run), "prior_usd": float,
             "total_usd": float, "prior_calls": int, "budget_reached": bool,
             "unpriced_models": [...],
             "prices": {model: {input_per_1m, output_per_1m, source, [matched, tiered]}},
             "stages": {stage: {requests, calls, cache_hits, retries, malformed, failures,
                                budget_stopped, prompt_tokens, completion_tokens, cost_usd}},
             "total": {same fields summed}}
        """
        with self._lock:
            stages = {name: dict(st) for name, st in sorted(self._stages.items())}
            total: dict[str, Any] = {f: 0 for f in STAGE_FIELDS}
            total["cost_usd"] = Decimal(0)
            for st in stages.values():
                for f in STAGE_FIELDS:
                    total[f] += st[f]
            for st in [*stages.values(), total]:
                st["cost_usd"] = _money(st["cost_usd"])
            return {
                "budget_usd": None if self.budget_usd is None else float(self.budget_usd),
                "spent_usd": _money(self._spent),
                "prior_usd": _money(self._prior),
                "total_usd": _money(self._prior + self._spent),
                "prior_calls": self._prior_calls,
                "budget_reached": self.budget_reached,
                "unpriced_models": sorted(self._unpriced),
                "prices": self._price_summary(),
                "stages": stages,
                "total": total,
            }

    def _price_summary(self) -> dict[str, dict[str, Any]]:
        """Each price used or configured: the figures, their source and, from genai-prices, what matched."""
        out = {m: {"input_per_1m": float(p[0]), "output_per_1m": float(p[1]), "source": "config"}
               for m, p in self.prices.items()}
        for m, t in list(self._table.items()):
            if t is not None:
                out[m] = {"input_per_1m": float(t.input_per_1m), "output_per_1m": float(t.output_per_1m),
                          "source": t.source, "matched": t.matched, "tiered": t.tiered}
        return dict(sorted(out.items()))
