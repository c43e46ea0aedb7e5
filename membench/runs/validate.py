"""`membench validate module:Class` -- check that a plugin adapter (or memory system) is usable before a long run.

A memory system is checked by `membench.runs.validate_memory`; what follows is about adapters.

The checks, on two small synthetic haystacks built here (a chat history and a set of procedural
trajectories): the plugin loads, has a name, `rank(query, haystack, granularity, k)` (or `retrieve(query, k)`
for a RetrievalSystem) can be called that way, returns at most k (id, score) pairs best first, only ids from
the haystack and no id twice, float scores that are not NaN, the same answer on two calls and from a second
instance, nothing for k = 0, no more than the corpus for a k larger than it, and no crash on an empty query
or an empty-string document. RetrievalSystem classes must also answer `get_system_name()` (a string) and
`get_system_info()` (a dict). Every problem is one sentence in plain words; an empty list means OK.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
from typing import Any, Mapping, Sequence

from membench.adapters.base import Adapter
from membench.runs.registry import AdapterLoadError, load_adapter, resolve
from membench.adapters.retrieval_system import RetrievalSystemAdapter
from membench.sessions.build import chat_session, trajectory_session
from membench.memory.protocol import is_memory_system
from membench.runs.validate_memory import call as _call, validate_memory_system
from membench.sessions.checks import ranking_problems
from membench.sessions.view import Haystack, Query

KNOWN_GRANULARITIES = ("turn", "session", "trajectory")


CHAT = Haystack((
    chat_session("v-s1", "2023-05-01T10:00:00", [
        ("user", "I adopted a puppy named Max last spring."),
        ("assistant", "Congratulations on Max! Puppies need lots of training."),
        ("user", "We go hiking together on weekends.")]),
    chat_session("v-s2", "2023-05-08T09:30:00", [
        ("user", "My sister Anna moved to Lisbon in April."),
        ("assistant", "Lisbon is lovely in spring.")]),
    chat_session("v-s3", "2023-05-15T18:00:00", [
        ("user", "I started a pottery class on Tuesdays."),
        ("assistant", "Pottery is a relaxing hobby."),
        ("user", "The instructor is called Rosa.")]),
))
CHAT_QUERY = Query("v-q1", "What is the name of the puppy I adopted?", "2023/05/20 (Sat) 12:00")

PROCEDURAL = Haystack((
    trajectory_session("v-t1", "put a clean mug in coffeemachine.", [
        ("You are in the kitchen. You see a countertop 1 and a sinkbasin 1.", "go to countertop 1"),
        ("On the countertop 1, you see a mug 1.", "take mug 1 from countertop 1"),
        ("You pick up the mug 1.", "clean mug 1 with sinkbasin 1"),
        ("You clean the mug 1.", "put mug 1 in/on coffeemachine 1")]),
    trajectory_session("v-t2", "heat some egg and put it in garbagecan.", [
        ("You are in the kitchen. You see a fridge 1.", "open fridge 1"),
        ("In the fridge 1, you see an egg 1.", "take egg 1 from fridge 1"),
        ("You pick up the egg 1.", "heat egg 1 with microwave 1")]),
    trajectory_session("v-t3", "find two pillows and put them in armchair.", [
        ("You are in a bedroom. You see a bed 1.", "go to bed 1"),
        ("On the bed 1, you see a pillow 1 and a pillow 2.", "take pillow 1 from bed 1")]),
    trajectory_session("v-t4", "look at book under the desklamp.", [
        ("You are in a study. You see a desk 1.", "go to desk 1"),
        ("On the desk 1, you see a book 1 and a desklamp 1.", "use desklamp 1")]),
))
PROCEDURAL_QUERY = Query("v-q2", "Put a clean cup in the coffee machine")

EMPTY_DOC = {
    "chat": Haystack(CHAT.sessions + (chat_session("v-s4", "2023-05-16T08:00:00", [("user", "")]),)),
    "procedural": Haystack(PROCEDURAL.sessions + (trajectory_session("v-t5", "", [("", "")]),)),
}


def _fixture(granularity: str) -> tuple[str, Haystack, Query]:
    return ("procedural", PROCEDURAL, PROCEDURAL_QUERY) if granularity == "trajectory" else ("chat", CHAT, CHAT_QUERY)


def _check_run(run: Any, k: int, ids: set[str], where: str) -> list[str]:
    """Problems with one `rank` result: the run-time checks (`membench.sessions.checks`), and best first."""
    problems = [f"rank() {where} {p}" for p in ranking_problems(run, k, ids)]
    if isinstance(run, (list, tuple)):
        scores = [s for item in run if isinstance(item, (tuple, list)) and len(item) == 2
                  for s in item[1:] if isinstance(s, float) and not math.isnan(s)]
        if any(b > a for a, b in zip(scores, scores[1:])):
            problems.append(f"rank() {where} did not put the results best first (scores go up down the list)")
    return problems


def _check_interface(cls: type) -> list[str]:
    """Problems with the class itself, before running it."""
    if issubclass(cls, Adapter):
        problems = []
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name.strip() or name == Adapter.name:
            problems.append("it has no name of its own: set the class attribute `name` to a short string")
        grans = getattr(cls, "granularities", ())
        if not grans or any(g not in KNOWN_GRANULARITIES for g in grans):
            problems.append(f"its `granularities` {tuple(grans)!r} must be a non-empty subset of "
                            f"{KNOWN_GRANULARITIES}")
        try:
            inspect.signature(cls.rank).bind(None, CHAT_QUERY, CHAT, "turn", 3)
        except TypeError:
            problems.append("its rank() cannot be called as rank(query, haystack, granularity, k)")
        if cls.rank is Adapter.rank and cls.score is Adapter.score:
            problems.append("it implements neither score(query, documents) nor rank(query, haystack, "
                            "granularity, k)")
        return problems
    missing = [m for m in ("retrieve", "get_system_name", "get_system_info") if not callable(getattr(cls, m, None))]
    if missing and callable(getattr(cls, "retrieve", None)):
        return [f"it looks like a RetrievalSystem but lacks {', '.join(missing)}()"]
    if missing:
        return ["it is neither a membench Adapter subclass nor a RetrievalSystem "
                "(retrieve(query, k), get_system_name(), get_system_info())"]
    try:
        inspect.signature(cls.retrieve).bind(None, "a query", 3)
    except TypeError:
        return ["its retrieve() cannot be called as retrieve(query, k)"]
    return []


def _check_system(adapter: RetrievalSystemAdapter) -> list[str]:
    """RetrievalSystem specifics, on the raw system (before the wrapper trims or checks anything)."""
    system, error = _call(lambda: adapter.system_for(PROCEDURAL)[0])
    if error:
        return [f"it could not be built on a small haystack: {error}"]
    problems = []
    name, error = _call(system.get_system_name)
    if error or not isinstance(name, str) or not name.strip():
        problems.append(f"get_system_name() should return a non-empty string, got {error or repr(name)}")
    info, error = _call(system.get_system_info)
    if error or not isinstance(info, dict):
        problems.append(f"get_system_info() should return a dict, got {error or type(info).__name__}")
    raw, error = _call(lambda: system.retrieve(PROCEDURAL_QUERY.text, 2))
    if error:
        problems.append(f"retrieve() crashed: {error}")
    elif raw is None or len(list(raw)) > 2:
        problems.append(f"retrieve() returned {0 if raw is None else len(list(raw))} results for k=2 "
                        "(at most 2 allowed)")
    return problems


def validate_adapter(spec: str, params: Mapping[str, Any] | None = None) -> list[str]:
    """Problems found with the adapter `spec` configured with `params`, in plain words (empty = OK)."""
    params = dict(params or {})
    try:
        cls = resolve(spec)
    except AdapterLoadError as exc:
        return [f"it does not load: {exc}"]
    if is_memory_system(cls):
        return validate_memory_system(cls, params, CHAT, CHAT_QUERY)
    problems = _check_interface(cls)
    if problems:
        return problems
    adapter, error = _call(lambda: load_adapter(spec, params))
    if error:
        return [f"it does not load with params {params!r}: {error}"]
    name = getattr(adapter, "name", None)
    if not isinstance(name, str) or not name.strip():
        problems.append("it has no name (a non-empty string attribute `name`)")
    config, error = _call(adapter.config)
    if error or not isinstance(config, dict):
        problems.append(f"config() should return a dict, got {error or type(config).__name__}")
    else:
        try:
            json.dumps(config)
        except (TypeError, ValueError) as exc:
            problems.append(f"config() cannot be written as JSON: {exc}")
    if isinstance(adapter, RetrievalSystemAdapter):
        problems += _check_system(adapter)
    second, error = _call(lambda: load_adapter(spec, params))
    for granularity in adapter.granularities:
        if granularity not in KNOWN_GRANULARITIES:
            continue
        kind, haystack, query = _fixture(granularity)
        documents = haystack.documents(granularity)
        ids = {d.item_id for d in documents}
        at = f"at granularity {granularity!r}"

        def rank(q: Query = query, hs: Haystack = haystack, k: int = 2, a: Adapter = adapter):
            return a.rank(q, hs, granularity, k)

        first, error = _call(rank)
        if error:
            problems.append(f"rank() crashed {at} with k=2: {error}")
            continue
        problems += _check_run(first, 2, ids, f"{at} with k=2")
        again, error = _call(rank)
        if error or again != first:
            problems.append(f"rank() {at} gave a different answer when asked the same question twice "
                            "(it must be deterministic)")
        if second is not None:
            other, error = _call(lambda: rank(a=second))
            if error or other != first:
                problems.append(f"a second instance ranked differently {at} from the first (fix any random seed "
                                "or hidden state)")
        none, error = _call(lambda: rank(k=0))
        if error:
            problems.append(f"rank() crashed {at} with k=0: {error}")
        elif none:
            problems.append(f"rank() {at} returned {len(none)} items for k=0 (expected none)")
        big = len(documents) + 10
        run, error = _call(lambda: rank(k=big))
        if error:
            problems.append(f"rank() crashed {at} when k ({big}) is larger than the corpus: {error}")
        else:
            problems += _check_run(run, len(documents), ids, f"{at} with k={big} over {len(documents)} documents")
        empty = Query("v-empty", "", query.date)
        run, error = _call(lambda: rank(q=empty))
        if error:
            problems.append(f"rank() crashed {at} on an empty query: {error}")
        else:
            problems += _check_run(run, 2, ids, f"{at} on an empty query")
        with_empty = EMPTY_DOC[kind]
        run, error = _call(lambda: rank(hs=with_empty))
        if error:
            problems.append(f"rank() crashed {at} on a haystack holding an empty-string document: {error}")
        else:
            problems += _check_run(run, 2, {d.item_id for d in with_empty.documents(granularity)},
                                   f"{at} on a haystack holding an empty-string document")
    return list(dict.fromkeys(problems))


def _parse_param(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: Sequence[str] | None = None) -> int:
    """`membench validate SPEC [-p KEY=VALUE ...]`: print the problems found; exit 0 when there are none."""
    parser = argparse.ArgumentParser(prog="membench validate",
                                     description="Check that an adapter plugin (module:Class) is usable.")
    parser.add_argument("spec", help="a built-in adapter name or module:Class")
    parser.add_argument("-p", "--param", action="append", default=[], type=_parse_param, metavar="KEY=VALUE",
                        help="a parameter for the adapter (VALUE read as JSON when it parses, else as text)")
    args = parser.parse_args(argv)
    problems = validate_adapter(args.spec, dict(args.param))
    if problems:
        print(f"{args.spec}: {len(problems)} problem(s) found:")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    print(f"{args.spec}: OK (loads, has a name, returns at most k known ids with float scores best first, "
          "is deterministic, and handles k=0, a k larger than the corpus, an empty query and an empty document)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
