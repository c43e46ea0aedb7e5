"""One error type for bad input, so every failure names the file, the record and the field."""

from __future__ import annotations


class InputError(ValueError):
    """Bad benchmark or config input: says where (file, record, field) and what is wrong."""

    exit_quietly = True  # membench.logs: the message says it all; the traceback goes to the job's log only

    def __init__(self, path, message: str, record: str | None = None, field: str | None = None):
        self.path = str(path)
        self.record = record
        self.field = field
        self.detail = message
        where = [f"file {self.path}"]
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}")


class DownloadError(InputError):
    """A dataset could not be fetched, verified or unpacked; ``path`` is the URL, file or archive at fault."""


class AdapterLoadError(ValueError):
    """A system spec that names no built-in, or a plugin that cannot be imported or used (`membench.runs.registry`)."""

    exit_quietly = True  # membench.logs: the message says it all; the traceback goes to the job's log only


class SystemOutputError(ValueError):
    """A system's answer to one question broke a rule of `membench.sessions.checks`; names the run and question."""

    exit_quietly = True  # membench.logs: the message says it all; the traceback goes to the job's log only

    def __init__(self, run: str, question: str, problems: list[str]):
        self.run, self.question, self.problems = run, question, list(problems)
        super().__init__(f"run {run!r}, question {question!r}: the system " + "; ".join(self.problems))
