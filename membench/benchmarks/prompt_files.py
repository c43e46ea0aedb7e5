"""A benchmark's own prompt texts, kept in a file beside its module (a judge prompt is part of a benchmark's protocol,
so it is carried over unchanged, with its source and commit named in the file's comment lines).

File format: comment lines (``#``) naming where the text comes from, then sections, each opened by a line
``=== <name> ===`` and running to the next such line or the end of the file. A section's text is its lines exactly as
they are (leading and trailing blanks and spaces included), less the one newline that ends its last line, so a text
that itself ends with a newline is followed by an empty line in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from membench.errors import InputError
from membench.io import sha256_text

__all__ = ["PromptFile", "read_prompt_file"]

_MARK = re.compile(r"^=== ([A-Za-z_][A-Za-z0-9_-]*) ===\n", re.MULTILINE)


@dataclass(frozen=True)
class PromptFile:
    """The sections of one prompt file, and its provenance."""

    name: str
    path: Path
    sections: dict[str, str]
    sha256: str  # of the file's text

    @property
    def version(self) -> str:
        return f"{self.name}@{self.sha256[:12]}"

    def describe(self) -> dict[str, str]:
        """Its provenance record, in the shape of the QA stage's other prompts."""
        return {"name": self.name, "source": f"package:{self.path.parent.name}/{self.path.name}",
                "sha256": self.sha256, "version": self.version}

    def __getitem__(self, section: str) -> str:
        return self.sections[section]


def read_prompt_file(path: Path, name: str, sections: tuple[str, ...]) -> PromptFile:
    """The file at ``path``, which must hold exactly the sections ``sections``."""
    text = path.read_text(encoding="utf-8")
    marks = list(_MARK.finditer(text))
    head = text[: marks[0].start()] if marks else text
    if any(line and not line.startswith("#") for line in head.splitlines()):
        raise InputError(path, "text before the first `=== name ===` line that is not a # comment")
    found: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end():end]
        if not body.endswith("\n"):
            raise InputError(path, f"section {mark.group(1)!r} does not end with a newline")
        found[mark.group(1)] = body[:-1]
    if sorted(found) != sorted(sections):
        raise InputError(path, f"expected the sections {', '.join(sections)}, found {', '.join(found) or 'none'}")
    return PromptFile(name, path, found, sha256_text(text))
