"""What a sealed memory system may read: the session logs it serves, its own store, the embedding cache and the
code and libraries it runs on; never the gold (qrels, maps, parsed tables, `results/`) or the benchmark's files.

`Seal.allows(path)`: the most specific listed folder that holds the path decides; a path under none is refused.
The sealed child (`membench.memory.sealed.child`) enforces it with a Python audit hook (PEP 578) on every file
open, directory listing and SQLite connection its Python code makes. What it cannot see: a C extension that opens
files itself (a native database engine, pyarrow). The seal keeps an honest library honest and catches the common
leaks (a plugin that reads `maps/` or `qrels.parquet`); run untrusted code in a container for more.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_ROOTS = ("/dev", "/proc", "/sys", "/etc", "/usr", "/lib", "/lib64", "/bin", "/opt")


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


def runtime_roots() -> list[str]:
    """Where Python, its libraries and their data live (never the project folder itself)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir(), str(Path.home()),
             *site.getsitepackages(), site.getusersitepackages(),
             *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")), *SYSTEM_ROOTS}
    return sorted(_real(p) for p in paths if p)


@dataclass(frozen=True)
class Seal:
    allowed: tuple[str, ...]  # real paths of folders (or files) the system may read
    denied: tuple[str, ...] = field(default=())  # real paths refused even inside an allowed folder

    @classmethod
    def for_run(cls, sessions: Path, store: Path, embeddings: Path | None, code: list[Path],
                gold: list[Path]) -> "Seal":
        """The seal of one memory run: `sessions` (the logs it serves), `store` (its store root), `embeddings`,
        `code` (membench and the plugin's module or package), and `gold`, refused unless a more specific allowed
        folder holds the path: the dataset's results folder, the working directory, the benchmark's files."""
        allowed = [sessions, store, *code, *([embeddings] if embeddings else [])]
        return cls(tuple(_real(p) for p in allowed) + tuple(runtime_roots()), tuple(_real(p) for p in gold))

    def allows(self, path: str | os.PathLike) -> bool:
        real = _real(path)
        best, verdict = -1, False
        for roots, ok in ((self.allowed, True), (self.denied, False)):
            for root in roots:
                if (real == root or real.startswith(root.rstrip(os.sep) + os.sep)) and len(root) >= best:
                    if len(root) > best or not ok:  # equal lengths: refusing wins
                        best, verdict = len(root), ok
        return verdict
