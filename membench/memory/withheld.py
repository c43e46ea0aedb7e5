"""Refs withheld: a run that returns its sources scored by attribution alone, and the attribution rule measured
against the sources it was not shown.

A run configured with `refs: withheld` has every hit's refs taken away before attribution
(`membench.memory.attribution`), so each result is mapped to turns by its text alone, as a system that rewrites
its memories without keeping their sources would be. Where the system does return its sources (mem0's extracted
facts carry the refs of the turns in the `add` call they were drawn from; an A-MEM note is one turn), those refs
are the truth the rule is checked against, hit by hit: precision = shared refs / refs attributed, recall = shared
refs / refs withheld, both over all hits with refs and text (micro-averaged). mem0's refs name every turn of the
`add` call (`turns_per_add`), a superset of a fact's source, so its recall here is a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from membench.memory.protocol import Hit


@dataclass
class WithheldRefs:
    hits: int = 0  # hits that had refs, and text to attribute
    without_text: int = 0  # hits that had refs but no text: dropped, nothing to attribute
    withheld: int = 0  # refs taken away
    attributed: int = 0  # refs the rule gave back
    shared: int = 0  # refs in both

    def strip(self, hits: Sequence[Hit]) -> tuple[list[Hit], list[tuple[str, ...]]]:
        """The hits without their refs, and the refs each had."""
        return [replace(hit, refs=()) for hit in hits], [tuple(hit.refs) for hit in hits]

    def compare(self, attributed: Sequence[Hit], truth: Sequence[tuple[str, ...]]) -> None:
        """Count one search's attributed hits against the refs `strip` took from them."""
        for hit, refs in zip(attributed, truth, strict=True):
            if not refs:
                continue
            if not hit.text.strip():
                self.without_text += 1
                continue
            self.hits += 1
            self.withheld += len(set(refs))
            self.attributed += len(set(hit.refs))
            self.shared += len(set(refs) & set(hit.refs))

    def as_dict(self) -> dict[str, Any]:
        return {"hits": self.hits, "hits_without_text": self.without_text, "refs_withheld": self.withheld,
                "refs_attributed": self.attributed, "refs_shared": self.shared,
                "precision": round(self.shared / self.attributed, 4) if self.attributed else None,
                "recall": round(self.shared / self.withheld, 4) if self.withheld else None}
