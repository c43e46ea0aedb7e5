"""What a sealed system may read and write: the session logs (or documents) it serves, its own store, the embedding
cache and the code and libraries it runs on; never the gold (qrels, maps, parsed tables, `results/`) or the
benchmark's files.

`Seal.allows(path)`: the most specific listed folder that holds the path decides; a path under none is refused.
Two ways to hold it (`Seal.kind`):

- `landlock` (the default, `memory_sealed: true`): the kernel's Landlock LSM (`membench.memory.sealed.landlock`)
  allows only `kernel_ruleset()`'s paths to the sealed process and every process it starts: reads of the allowed
  folders, writes to its store and a private temporary folder (its `TMPDIR` and `HOME`), TCP connections only to
  the ports it was given (membench's caching model endpoint, a URL in its params). C code, subprocesses, ctypes
  and pyarrow are held as Python's `open()` is.
- `audit-hook` (asked for by name only): a Python audit hook (PEP 578) refuses the file opens, directory listings
  and SQLite connections Python code makes; a subprocess, ctypes or a C extension gets around it.

In both, the parent side keeps the gold, and what the child sends back is unpickled with an allow-list
(`membench.memory.sealed.frames`), so a sealed system cannot run code in the process that holds the gold.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from membench.memory.sealed.landlock import Ruleset

SYSTEM_ROOTS = ("/dev", "/proc", "/sys", "/etc", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/opt")
KINDS = ("landlock", "audit-hook")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/shm")  # written to by ordinary runtimes


def seal_kind(value: bool | str | None) -> str | None:
    """The config's `memory_sealed` as the seal to put on: true is Landlock; a seal's name is that seal."""
    if value is True:
        return "landlock"
    if value in (False, None):
        return None
    if value in KINDS:
        return value
    raise ValueError(f"memory_sealed: {value!r} is not true, false or a seal's name ({', '.join(KINDS)})")


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


def runtime_roots(with_home_and_tmp: bool = True) -> list[str]:
    """Where Python, its libraries and their data live (never the project folder itself). The home and temporary
    folders only for the audit-hook seal: under Landlock the system gets private ones instead."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), site.getusersitepackages(),
             *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")), *SYSTEM_ROOTS}
    if with_home_and_tmp:
        paths |= {tempfile.gettempdir(), str(Path.home())}
    return sorted(_real(p) for p in paths if p)


def _beneath(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Seal:
    allowed: tuple[str, ...]  # real paths of folders (or files) the system may read
    denied: tuple[str, ...] = field(default=())  # real paths refused even inside an allowed folder
    writable: tuple[str, ...] = field(default=())  # folders it may also write (its store, its temporary folder)
    ports: tuple[int, ...] = field(default=())  # TCP ports it may connect to (Landlock ABI 4 and later)
    kind: str = "landlock"

    @classmethod
    def for_run(cls, sessions: Path | None, store: Path | None, embeddings: Path | None, code: list[Path],
                gold: list[Path], kind: str = "landlock") -> "Seal":
        """The seal of one run: `sessions` (the logs it serves), `store` (its store root, written), `embeddings`,
        `code` (membench and the plugin's module or package) and `gold`, refused unless a more specific allowed
        folder holds the path: the dataset's results folder, the working directory, the benchmark's files. (The
        sealed process adds its private temporary folder and its ports.)"""
        if kind not in KINDS:
            raise ValueError(f"unknown seal {kind!r} (known: {', '.join(KINDS)})")
        writable = [store] if store else []
        allowed = [*([sessions] if sessions else []), *writable, *code, *([embeddings] if embeddings else [])]
        roots = runtime_roots(with_home_and_tmp=kind == "audit-hook")
        return cls(tuple(_real(p) for p in allowed) + tuple(roots), tuple(_real(p) for p in gold),
                   tuple(_real(p) for p in writable), (), kind)

    def allows(self, path: str | os.PathLike) -> bool:
        real = _real(path)
        best, verdict = -1, False
        for roots, ok in ((self.allowed, True), (self.denied, False)):
            for root in roots:
                if _beneath(real, root) and len(root) >= best:
                    if len(root) > best or not ok:  # equal lengths: refusing wins
                        best, verdict = len(root), ok
        return verdict

    def readable(self) -> list[str]:
        """The allowed folders and files as an allow-list with nothing denied inside: Landlock grants whole
        folders, so a folder that holds both (the project folder, with membench's code and `results/`) is walked
        into until every listed path is wholly allowed."""
        found: list[str] = []
        for root in sorted(set(self.allowed)):
            if not any(_beneath(root, other) for other in found):
                self._cover(root, found)
        return found

    def _cover(self, path: str, found: list[str]) -> None:
        if not self.allows(path):
            return
        if not any(_beneath(d, path) and d != path for d in self.denied):
            found.append(path)
            return
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if not entry.is_symlink():  # a link's target is allowed (or not) by its own real path
                self._cover(entry.path, found)

    def kernel_ruleset(self) -> Ruleset:
        writable = list(self.writable)
        read = [p for p in self.readable() if not any(_beneath(p, w) for w in writable)]
        return Ruleset(tuple(read), tuple(writable + [d for d in DEVICES if os.path.exists(d)]), tuple(self.ports))
