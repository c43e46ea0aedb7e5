"""The prompts of the model stages: project files, overridable from config, filled into chat messages.

File format (``membench/prompts/<name>.txt``, or any file named by ``llm.prompts.<name>`` in config)::

    [[system]]
    One or more lines of system message.
    TASK: <name>

    [[user]]
    Instructions ...
    INPUT:
    {{placeholder}} ...

* ``[[system]]`` / ``[[user]]`` lines open the two messages; a file without them is one user message.
* ``{{name}}`` is a placeholder, filled in one pass (a value that itself contains ``{{x}}`` is left as it
  is). JSON braces need no escaping. Every placeholder a stage requires must be present, and a placeholder
  the stage does not know is an error, so a typo cannot silently send an empty prompt.
* ``TASK: <name>`` and an ``INPUT:`` line mark the task and the start of the input data. A real model reads
  them as plain text; the test server (``tests/openai_server.py``) dispatches on them. The shipped prompts
  have both; a user's own prompt without them is accepted with a warning (the test server cannot serve it).

The cache key of a call is the hash of the filled messages, so editing a prompt file makes new calls only
for the prompts whose text changed, and :attr:`Prompt.sha256` (of the file) is recorded in each stage's
outputs for provenance.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from membench.errors import InputError
from membench.io import sha256_text

DATA_FILES = ("../prompts/*.txt",)  # the packaged prompts; part of every rule's code version that imports this

log = logging.getLogger("membench.llm")

__all__ = ["Prompt", "PROMPTS", "load_prompt", "parse_prompt", "prompt_config"]

# name -> (required placeholders, optional placeholders)
PROMPTS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "facts": (frozenset({"turns"}), frozenset({"date"})),
    "grade": (frozenset({"query", "trajectory"}), frozenset()),
    "answer": (frozenset({"context", "question"}), frozenset({"question_date"})),
    "verdict": (frozenset({"question", "gold", "answer"}), frozenset({"rules", "question_type"})),
}

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^\[\[(system|user)\]\][ \t]*$", re.MULTILINE)
_TASK = re.compile(r"^\s*TASK:\s*([A-Za-z_-]+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt template: ``messages(**values)`` gives the chat messages of one request."""

    name: str
    source: str  # "package:<name>.txt" or the file path
    system: str | None
    user: str
    sha256: str  # of the file's text

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.user)) | frozenset(_PLACEHOLDER.findall(self.system or ""))

    def fill(self, template: str, values: Mapping[str, Any]) -> str:
        def sub(m: re.Match) -> str:
            key = m.group(1)
            if key not in values or values[key] is None:
                raise KeyError(f"prompt {self.name!r} ({self.source}) needs a value for {{{{{key}}}}}")
            return str(values[key])

        return _PLACEHOLDER.sub(sub, template)

    def messages(self, **values: Any) -> list[dict[str, str]]:
        """The filled chat messages: an optional system message, then the user message."""
        out = []
        if self.system:
            out.append({"role": "system", "content": self.fill(self.system, values)})
        out.append({"role": "user", "content": self.fill(self.user, values)})
        return out

    @property
    def version(self) -> str:
        """``<name>@<first 12 hex of the file's sha256>``: shown in the report and tagged into cache keys."""
        return f"{self.name}@{self.sha256[:12]}"

    def describe(self) -> dict[str, str]:
        """Provenance record for stage outputs."""
        return {"name": self.name, "source": self.source, "sha256": self.sha256, "version": self.version}


def parse_prompt(text: str, name: str, source: str = "<text>") -> Prompt:
    """Parse and check a prompt file's text (see the module docstring)."""
    if name not in PROMPTS:
        raise InputError(source, f"unknown prompt {name!r}; known: {', '.join(sorted(PROMPTS))}")
    digest = sha256_text(text)
    parts: dict[str, str] = {}
    marks = list(_SECTION.finditer(text))
    if not marks:
        parts["user"] = text
    else:
        if text[: marks[0].start()].strip():
            raise InputError(source, "text before the first [[system]]/[[user]] line")
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            role = m.group(1)
            if role in parts:
                raise InputError(source, f"two [[{role}]] sections")
            parts[role] = text[m.end():end].strip("\n")
    user = parts.get("user", "").strip()
    if not user:
        raise InputError(source, "the prompt has no user message ([[user]] section)")
    system = (parts.get("system") or "").strip() or None
    prompt = Prompt(name, source, system, user.rstrip() + "\n", digest)

    required, optional = PROMPTS[name]
    found = prompt.placeholders
    missing = sorted(required - found)
    if missing:
        raise InputError(source, f"prompt {name!r} lacks the placeholder(s) "
                                 f"{', '.join('{{' + m + '}}' for m in missing)}")
    unknown = sorted(found - required - optional)
    if unknown:
        known = ", ".join("{{" + k + "}}" for k in sorted(required | optional))
        raise InputError(source, f"prompt {name!r} has unknown placeholder(s) "
                                 f"{', '.join('{{' + u + '}}' for u in unknown)}; it may use {known}")
    task = _TASK.search(text)
    if task is None or task.group(1).lower() != name or "INPUT:" not in user:
        log.warning("prompt %s (%s) has no 'TASK: %s' line or no 'INPUT:' line in its user message; a real "
                    "model does not need them, the test server does", name, source, name)
    return prompt


def prompt_config(config: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The ``llm.prompts`` mapping of a whole config (or of the ``llm`` section itself)."""
    if not config:
        return {}
    section = config.get("llm", config) if isinstance(config, Mapping) else {}
    prompts = (section or {}).get("prompts") or {}
    if not isinstance(prompts, Mapping):
        raise InputError("config", "must map prompt name -> file path", field="llm.prompts")
    return prompts


def load_prompt(name: str, config: Mapping[str, Any] | None = None, base_dir: Path | None = None) -> Prompt:
    """The prompt ``name``: the file at config ``llm.prompts.<name>`` if set (relative to ``base_dir``, default
    the working directory), else the package default ``membench/prompts/<name>.txt``."""
    if name not in PROMPTS:
        raise InputError("config", f"unknown prompt {name!r}; known: {', '.join(sorted(PROMPTS))}",
                         field="llm.prompts")
    override = prompt_config(config).get(name)
    if override:
        path = Path(override)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        if not path.is_file():
            raise InputError(path, "prompt file not found", field=f"llm.prompts.{name}")
        return parse_prompt(path.read_text(encoding="utf-8"), name, str(path))
    text = resources.files("membench").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")
    return parse_prompt(text, name, f"package:{name}.txt")
