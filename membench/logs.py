"""Send a stage's logging to its Snakemake `log:` file, and record a failure's reason there too.

An error the project raises itself, whose message already says everything in one line (``exit_quietly = True``
on its class: bad input or config, an adapter that cannot be loaded, a model stage that stopped, an endpoint
that cannot be used), and Ctrl-C end the process with that one line on the console and a non-zero exit; the
traceback goes to the log file only. Any other error (a bug) shows its traceback on the console as well.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence


def says_it_all(err: BaseException) -> bool:
    """Whether an error is one the project raises with a complete one-line message (``exit_quietly``)."""
    return bool(getattr(err, "exit_quietly", False))


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Around the Snakefile's own checks (config, adapter runs): such an error ends snakemake with its message
    alone and exit status 1, where Snakemake would add the stack of Snakefile lines that raised it."""
    try:
        yield
    except Exception as err:
        if says_it_all(err):
            raise SystemExit(f"membench: {err}") from None
        raise


class _NotFileOnly(logging.Filter):
    """Keeps records logged with ``extra={"file_only": True}`` (a failure's traceback) off a handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "file_only", False)


class _FileOnly(logging.Filter):
    """Keeps the records of the named loggers (and their children) below WARNING off a handler."""

    def __init__(self, names: Sequence[str]):
        super().__init__()
        self.names = tuple(names)

    def filter(self, record: logging.LogRecord) -> bool:
        chatty = any(record.name == n or record.name.startswith(n + ".") for n in self.names)
        return not chatty or record.levelno >= logging.WARNING


@contextmanager
def log_to(path: str | Path | None, level: int = logging.INFO,
           file_only: Sequence[str] = ()) -> Iterator[logging.Logger]:
    """Log to `path` (and stderr) for the duration of a stage; an exception is logged, then re-raised.
    `file_only`: loggers of a chatty library (mem0 logs every insert) whose info lines go to `path` only."""
    root = logging.getLogger()
    console = logging.StreamHandler(sys.stderr)
    console.addFilter(_FileOnly(file_only))
    console.addFilter(_NotFileOnly())
    handlers: list[logging.Handler] = [console]
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(path, mode="w", encoding="utf-8"))
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for h in handlers:
        h.setFormatter(fmt)
        root.addHandler(h)
    previous = root.level
    root.setLevel(level)
    log = logging.getLogger("membench")
    try:
        yield log
    except KeyboardInterrupt:
        log.error("interrupted (SIGINT) outside the model calls: the call cache keeps every answered call (a "
                  "rerun repays nothing); this job's partial outputs are not kept")
        raise SystemExit(130) from None
    except Exception as err:
        log.error("%s: %s", type(err).__name__, err)
        log.error("where it was raised:", exc_info=err, extra={"file_only": True})
        if says_it_all(err):
            raise SystemExit(1) from None
        raise
    finally:
        for h in handlers:
            root.removeHandler(h)
            h.close()
        root.setLevel(previous)

