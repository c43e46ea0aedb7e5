"""Linux Landlock through its three system calls: the kernel, not Python, refuses what a sealed process may not do.

A ruleset lists what stays allowed (folders or files to read, folders to write, TCP ports to connect to); once
`restrict` applies it, the calling thread and every process it starts (a subprocess, `os.system`, an MCP server)
can open nothing else, whatever the language: pyarrow's C++ reader and ctypes' `open` are refused as `open()` is.
It needs no root: `no_new_privs` is set first, as the kernel requires. Landlock restricts the calling thread only
(ABI 7 has no flag to reach threads already running), so `restrict` refuses to run in a process with more than
one thread: the sealed child calls it before it imports anything that could start one.

Written on ctypes rather than a binding from PyPI: the calls are three, their structures are fixed by the kernel's
ABI, and the one maintained binding did not cover the network rules (ABI 4) and scopes (ABI 6) used here.
"""

from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass

# The generic syscall numbers: the same on x86-64, arm64 and the other architectures Landlock supports.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION = 1 << 0
_PATH_BENEATH, _NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK
         | MAKE_SYM | REFER | TRUNCATE | IOCTL_DEV)
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file (not a folder) may hold


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args) -> int:
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def abi() -> tuple[int, str]:
    """(the kernel's Landlock ABI version, why it is 0): 0 where the kernel lacks Landlock or has it off."""
    try:
        return _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION)), ""
    except OSError as err:
        if err.errno == errno.ENOSYS:
            return 0, "the kernel has no Landlock system calls (Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK)"
        if err.errno == errno.EOPNOTSUPP:
            return 0, "Landlock is built into the kernel but not enabled (add landlock to the lsm= boot parameter)"
        return 0, f"landlock_create_ruleset failed: {err}"
    except AttributeError:  # a libc without syscall(): not Linux
        return 0, "not a Linux kernel"


def handled_fs(version: int) -> int:
    rights = READ | WRITE
    if version < 2:
        rights &= ~REFER
    if version < 3:
        rights &= ~TRUNCATE
    if version < 5:
        rights &= ~IOCTL_DEV
    return rights


@dataclass(frozen=True)
class Ruleset:
    """What stays allowed. `read`: folders and files to read (and run); `write`: folders to read and write;
    `ports`: TCP ports it may connect to (None: the network is not limited)."""

    read: tuple[str, ...]
    write: tuple[str, ...] = ()
    ports: tuple[int, ...] | None = ()

    def restrict(self, version: int) -> None:
        """Apply the ruleset to this process (and whatever it starts), for good. Needs a single-threaded process."""
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:
            raise RuntimeError(f"Landlock restricts only the calling thread, and this process has {threads} threads")
        fs = handled_fs(version)
        attr = _RulesetAttr(fs, (BIND_TCP | CONNECT_TCP) if version >= 4 and self.ports is not None else 0,
                            (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if version >= 6 else 0)
        size = 24 if version >= 6 else 16 if version >= 4 else 8
        ruleset = _syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        try:
            for paths, rights in ((self.read, READ), (self.write, READ | WRITE)):
                for path in paths:
                    self._add_path(ruleset, path, rights & fs)
            if attr.handled_access_net:
                for port in self.ports or ():
                    rule = _NetPortAttr(CONNECT_TCP, port)
                    _syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_NET_PORT), ctypes.byref(rule),
                             ctypes.c_uint32(0))
            _no_new_privs()
            _syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
        finally:
            os.close(ruleset)

    @staticmethod
    def _add_path(ruleset: int, path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            return  # nothing there to allow
        try:
            if not os.path.isdir(path):
                rights &= FILE_ONLY
            rule = _PathBeneathAttr(rights, fd)
            _syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_PATH_BENEATH), ctypes.byref(rule),
                     ctypes.c_uint32(0))
        finally:
            os.close(fd)


def _no_new_privs() -> None:
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
