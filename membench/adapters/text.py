"""Small helpers shared by the built-in adapters: tokens, stopwords, a light stemmer, declared parameters,
and the per-haystack index cache.

Kept in one module so `registry.adapter_source_files` can name it as an input of every adapter that uses it:
editing the tokeniser reruns exactly the adapters that import it.
"""

from __future__ import annotations

import operator
import re
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

from membench.sessions.view import Document

WORD_RE = re.compile(r"\w+")

# A deliberately small English stopword list: function words that carry no topic.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not of off on
    once only or other our ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves""".split()
)


def word_tokens(text: str) -> list[str]:
    """Lowercased `\\w+` tokens: the tokeniser of `bm25`, `hybrid` and `substring`."""
    return WORD_RE.findall(text.lower())


def keywords(text: str) -> list[str]:
    """Distinct lowercased word tokens minus stopwords, in first-seen order."""
    seen: dict[str, None] = {}
    for token in word_tokens(text):
        if token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


def _has_vowel(text: str) -> bool:
    return any(c in "aeiouy" for c in text)


# A pure function of the word, asked once per token occurrence: bm25-v2 spent 2 of a BEAM-100K rank job's 5.5 s
# stemming the same words again.
@lru_cache(maxsize=1 << 18)
def stem(word: str) -> str:
    """A light suffix stripper (plural -s/-es/-ies, -ed, -ing, a final -e), deterministic and dependency-free.

    It is not the Porter algorithm: it only conflates the inflections that matter most for chat text, e.g.
    cooks/cooked/cooking -> cook, studies/studied/studying -> study, boxes -> box, making/make -> mak,
    running -> run. Words of three letters or fewer and tokens with digits are returned unchanged.
    """
    w = word.lower()
    if len(w) <= 3 or not w.isalpha():
        return w
    # plural / third person
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("ches", "shes", "xes", "zes", "ses")) and len(w) > 4:
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    # past tense / progressive
    if w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    else:
        for suffix in ("ing", "ed"):
            base = w[: -len(suffix)]
            if w.endswith(suffix) and len(base) >= 3 and _has_vowel(base):
                w = base
                if w[-1] == w[-2] and w[-1] not in "lsz":  # running -> runn -> run
                    w = w[:-1]
                break
    # a final silent e, so that make/making and bake/baked meet
    if w.endswith("e") and len(w) >= 4:
        w = w[:-1]
    return w


def merge_params(adapter: str, defaults: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """Declared defaults overlaid by the caller's params; an undeclared name is a clear error."""
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        known = ", ".join(sorted(defaults)) or "(none)"
        raise ValueError(f"adapter {adapter!r} has no parameter {', '.join(map(repr, unknown))}; "
                         f"its parameters are: {known}")
    return {**defaults, **params}


T = TypeVar("T")


class HaystackCache(Generic[T]):
    """A small LRU of per-haystack indexes, keyed by the tuple of document ids.

    All LoCoMo questions of one conversation share a haystack, and all Procedural queries share one, so the
    index is built once per haystack. The documents' texts are kept with the entry and compared on a hit, so
    the same ids with other texts (e.g. session vs trajectory granularity) rebuild rather than reuse.
    """

    def __init__(self, build: Callable[[Sequence[Document]], T] | None = None, maxsize: int = 4):
        self._build = build
        self._maxsize = maxsize
        self._entries: OrderedDict[tuple[str, ...], tuple[tuple[str, ...], T]] = OrderedDict()
        self._last: tuple[tuple[Document, ...], T] | None = None  # the very documents of the latest answer
        self.builds = 0

    def get(self, documents: Sequence[Document], build: Callable[[Sequence[Document]], T] | None = None) -> T:
        """The index of this haystack, built (by `build`, else the cache's builder) on a miss. The same Document
        objects as the latest call (a haystack's documents are built once) are a hit without keying them."""
        last = self._last
        if last is not None and len(last[0]) == len(documents) and all(map(operator.is_, last[0], documents)):
            return last[1]
        index = self._lookup(documents, build)
        self._last = (tuple(documents), index)
        return index

    def _lookup(self, documents: Sequence[Document], build: Callable[[Sequence[Document]], T] | None) -> T:
        key = tuple(d.item_id for d in documents)
        texts = tuple(d.text for d in documents)
        entry = self._entries.get(key)
        if entry is not None and entry[0] == texts:
            self._entries.move_to_end(key)
            return entry[1]
        index = (build or self._build)(documents)
        self.builds += 1
        self._entries[key] = (texts, index)
        self._entries.move_to_end(key)
        while len(self._entries) > self._maxsize:
            self._entries.popitem(last=False)
        return index
