"""Which stores a memory run needs and which sessions go into each, in time order.

Shared (`system.shares_sessions`): one store for the dataset holding every distinct session once; each
question's search is scoped to its haystack's sessions. Otherwise one store per distinct haystack
content: the key hashes the haystack's session keys (themselves content hashes), so two questions with
the same sessions share a store and a changed session makes a new one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from membench.sessions.reader import SessionStore
from membench.sessions.view import Session

SHARED = "shared"


@dataclass
class StorePlan:
    sessions: dict[str, list[Session]]  # store key -> sessions in ingest (time) order
    haystacks: dict[str, list[str]]  # store key -> haystack keys searched in it, in benchmark order


def time_order(sessions: list[Session]) -> list[Session]:
    """By session time (sessions without a time last), ties by first appearance."""
    ordered = sorted(enumerate(sessions), key=lambda p: (p[1].timestamp is None, p[1].timestamp or "", p[0]))
    return [s for _, s in ordered]


def haystack_store_key(sessions: list[Session]) -> str:
    return "h" + hashlib.sha256(",".join(s.session_id for s in sessions).encode()).hexdigest()[:16]


def plan_stores(store: SessionStore, haystack_keys: list[str], shared: bool) -> StorePlan:
    plan = StorePlan({}, {})
    for hay in haystack_keys:
        sessions = time_order(list(store.haystack(hay).sessions))
        key = SHARED if shared else haystack_store_key(sessions)
        if key not in plan.sessions:
            plan.sessions[key] = []
            plan.haystacks[key] = []
        have = {s.session_id for s in plan.sessions[key]}
        plan.sessions[key] += [s for s in sessions if s.session_id not in have]
        plan.haystacks[key].append(hay)
    if shared:
        plan.sessions = {k: time_order(v) for k, v in plan.sessions.items()}
    return plan
