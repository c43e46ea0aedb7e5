"""Send a stage's logging to its Snakemake `log:` file, and record a failure's reason there too."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def log_to(path: str | Path | None, level: int = logging.INFO) -> Iterator[logging.Logger]:
    """Log to `path` (and stderr) for the duration of a stage; an exception is logged, then re-raised."""
    root = logging.getLogger()
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
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
    except Exception as err:
        log.error("%s: %s", type(err).__name__, err)
        raise
    finally:
        for h in handlers:
            root.removeHandler(h)
            h.close()
        root.setLevel(previous)

