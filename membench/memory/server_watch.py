"""Runs a server's command and writes how it ended to a file, so a server that dies mid-run can be named.

    python -P .../membench/memory/server_watch.py STATUS_FILE COMMAND [ARG ...]   (or -m membench.memory.server_watch)

stdin, stdout and stderr pass straight through (an MCP server over stdio talks on them); a TERM or INT sent to
this process is passed on to the server, and the server is killed if this process is (Linux's parent-death
signal), so no server outlives its watch. STATUS_FILE gets the server's exit code (negative: the signal).
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def main() -> None:
    status, *command = sys.argv[1:]
    server = subprocess.Popen(command, preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda number, frame: server.send_signal(number))
    code = server.wait()
    with open(status, "w", encoding="utf-8") as fh:
        fh.write(f"{code}\n")
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
