"""Send a stage's logging to its Snakemake `log:` file, and record a failure's reason there too.

An error that already says everything in one line (``exit_quietly = True`` on its class: a model stage that
stopped, an endpoint that cannot be used) and Ctrl-C end the process with that one line and a non-zero exit,
without a Python traceback.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence


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
        if getattr(err, "exit_quietly", False):
            raise SystemExit(1) from None
        raise
    finally:
        for h in handlers:
            root.removeHandler(h)
            h.close()
        root.setLevel(previous)

