"""The parent's side of a sealed process: start it behind its seal, call it, bound each call's time, end it.

`SealedProcess` is what `SealedSystem` (a memory system) and `SealedAdapter` (a third-party adapter) share. It
checks the kernel before anything starts: the Landlock seal needs Landlock (`seal_kind` says what to ask for
instead); it gives the child a private temporary folder, removed at the end; it reads every reply with the
allow-list of `membench.memory.sealed.frames`; a call that gets no answer within `timeout` seconds ends the
child and fails with one line naming the run, the system, the call and the timeout; a child that dies names its
exit code.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import select
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Mapping
from urllib.parse import urlsplit

from membench.memory.sealed import landlock
from membench.memory.sealed.frames import read_reply, write_frame
from membench.memory.sealed.seal import Seal

DEFAULT_TIMEOUT = 1800.0


class SealUnavailable(RuntimeError):
    """The seal the config asks for cannot be had on this kernel."""


def kernel_abi(kind: str) -> int:
    """Landlock's ABI for a Landlock seal (0 for the audit hook); stops with the kernel requirement if it is missing."""
    if kind != "landlock":
        return 0
    version, why = landlock.abi()
    if version < 1:
        raise SealUnavailable(
            f"memory_sealed: true asks for the kernel's Landlock seal, and this kernel cannot give it: {why}. It needs "
            "Linux 5.13 or later with Landlock enabled (the network rules need 6.7). To run with the weaker seal, a "
            "Python audit hook that a subprocess, ctypes or a C extension can get around, set memory_sealed: audit-hook")
    return version


def seal_label(kind: str, abi: int) -> str:
    """How the run's metadata and the report name the seal that ran."""
    if kind == "landlock":
        return f"landlock (ABI {abi}{'' if abi >= 4 else ', files only: the network is not limited below ABI 4'})"
    return "audit-hook (Python code only)"


class SealedProcess:
    role = "memory"

    def __init__(self, run: str, cls: type, params: Mapping[str, Any], seal: Seal, timeout: float | None = None,
                 embedding_overlay: str | None = None, ports: tuple[int, ...] = ()):
        """`ports`: TCP ports it may connect to besides those of the URLs in its params (membench's caching model
        endpoint); `embedding_overlay`: where it writes the vectors it adds to the embedding cache, which a Landlock
        seal lets it read only. Under Landlock it gets a private temporary folder, written, removed at the end."""
        self.params = dict(params)
        self.run, self.cls = run, cls
        self.timeout = float(timeout or DEFAULT_TIMEOUT)
        self.abi = kernel_abi(seal.kind)
        self.label = seal_label(seal.kind, self.abi)
        self.private = tempfile.mkdtemp(prefix="membench-sealed-") if seal.kind == "landlock" else None
        if self.private:
            seal = dataclasses.replace(seal, allowed=seal.allowed + (self.private,),
                                       writable=seal.writable + (self.private,))
        self.seal = dataclasses.replace(seal, ports=tuple(sorted({*seal.ports, *ports, *url_ports(self.params)})))
        for folder in self.seal.writable:  # the kernel grants only what exists when the seal goes on
            os.makedirs(folder, exist_ok=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the parent's plugins too
        self.child = subprocess.Popen([sys.executable, "-m", "membench.memory.sealed.child"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env)
        write_frame(self.child.stdin, {"run": run, "cls": (cls.__module__, cls.__qualname__), "params": self.params,
                                       "seal": self.seal, "abi": self.abi, "private": self.private, "role": self.role,
                                       "embedding_overlay": embedding_overlay, **self.start_frame(),
                                       "level": logging.getLogger().getEffectiveLevel()})
        try:
            self.described = self._answer("start")
        except BaseException:
            self.shutdown()
            raise
        self.name = self.described["name"]
        self.granularities = self.described["granularities"]
        self.uses_metadata = self.described["uses_metadata"]

    def start_frame(self) -> dict[str, Any]:
        """What else the child needs to build the system (an adapter's spec and context)."""
        return {}

    def _answer(self, method: str) -> Any:
        ready, _, _ = select.select([self.child.stdout], [], [], self.timeout)
        if not ready:
            self.child.kill()
            self.child.wait()
            raise TimeoutError(f"sealed run {self.run!r}: the system {self.cls.__qualname__} did not answer "
                               f"{method!r} within {self.timeout:g} s (memory_call_timeout); its process was ended")
        try:
            status, value, records = read_reply(self.child.stdout, self.run)
        except EOFError:
            code = self.child.wait()
            raise RuntimeError(f"sealed run {self.run!r}: the system's process ended (exit code {code}) during "
                               f"{method!r}; its log holds the reason") from None
        for record in records:  # the child's log lines, through this process's handlers (the rule's log)
            logging.getLogger(record.name).handle(record)
        if status == "error":
            raise value
        return value

    def _call(self, method: str, *args: Any) -> Any:
        if self.child.poll() is not None:  # ended (a timeout, a crash): closing it is done; anything else fails
            if method == "close":
                return None
            raise RuntimeError(f"sealed run {self.run!r}: the system's process has ended (exit code "
                               f"{self.child.returncode}); {method!r} cannot be called")
        write_frame(self.child.stdin, (method, args))
        return self._answer(method)

    def config(self) -> dict[str, Any]:
        return self.described["config"]

    def shutdown(self) -> None:
        """End the child (its stdin closes, it returns) and remove its private folder."""
        if self.child.poll() is None:
            try:
                self.child.stdin.close()
                self.child.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.child.kill()
                self.child.wait()
        if self.private:
            shutil.rmtree(self.private, ignore_errors=True)


def url_ports(value: Any) -> set[int]:
    """The ports of the http(s) URLs anywhere in a system's params (an MCP server's `url`)."""
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        parts = urlsplit(value)
        return {parts.port or (443 if parts.scheme == "https" else 80)}
    if isinstance(value, Mapping):
        return set().union(*(url_ports(v) for v in value.values()))
    if isinstance(value, (list, tuple)):
        return set().union(*(url_ports(v) for v in value))
    return set()
