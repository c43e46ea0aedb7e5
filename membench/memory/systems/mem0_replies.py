"""mem0's extraction replies, kept to the shape mem0 can read. mem0 2.x reads `{"memory": [{"text": ...}, ...]}` and
calls `.get` on every entry outside its own error handling, so a single entry that is a bare string (a small model
writes them) crashes the whole `add`, and a rerun crashes again on the cached reply. The entries mem0 cannot use
are dropped before it sees them and counted in the run's stats; the reply as the model wrote it stays in the call
cache, so fixing this costs no call and moves no cache key."""

from __future__ import annotations

import json
from typing import Any, Callable


def usable_entries(reply: Any) -> tuple[Any, int]:
    """`reply` with the `memory` entries mem0 cannot store removed (not an object, or no non-empty string `text`),
    and how many went. A reply mem0 already handles on its own (no JSON object, no `memory`) passes unchanged."""
    if not isinstance(reply, str):
        return reply, 0
    from membench.memory.systems.mem0 import import_mem0

    import_mem0()  # telemetry off before mem0's first import
    from mem0.memory.utils import extract_json, remove_code_blocks

    text = remove_code_blocks(reply)
    try:
        parsed = json.loads(text, strict=False)
    except json.JSONDecodeError:
        try:
            parsed = json.loads(extract_json(text), strict=False)
        except json.JSONDecodeError:
            return reply, 0
    if not isinstance(parsed, dict) or "memory" not in parsed:
        return reply, 0
    entries = parsed["memory"] if isinstance(parsed["memory"], list) else [parsed["memory"]]
    kept = [e for e in entries if isinstance(e, dict) and isinstance(e.get("text"), str) and e["text"].strip()]
    if len(kept) == len(entries) and entries is parsed["memory"]:
        return reply, 0
    return json.dumps({**parsed, "memory": kept}), len(entries) - len(kept)


def guarded(generate: Callable[..., Any], dropped: list[int]) -> Callable[..., Any]:
    """mem0's `llm.generate_response` with `usable_entries` applied to each reply; `dropped` gathers the counts."""
    def call(*args, **kwargs):
        reply, gone = usable_entries(generate(*args, **kwargs))
        dropped.append(gone)
        return reply
    return call
