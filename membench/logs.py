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

