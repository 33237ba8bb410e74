"""Linux inotify through ctypes: tells the notes index which notes changed since last time,
so a refresh stats a handful of files instead of the whole vault.

Anything the watcher cannot account for exactly (a directory created, moved or deleted,
a queue overflow, a failed watch) makes `drain()` return None: the caller then rescans.
Elsewhere (macOS, Windows) `VaultWatcher.create()` returns None and every refresh scans.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import struct

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x002, 0x004, 0x008
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x040, 0x080, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
         | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)  # fmt: skip
_RESCAN = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_HEADER = struct.Struct("iIII")


class VaultWatcher:
    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self.fd = fd
        self._dirs: dict[int, str] = {}  # watch descriptor -> vault-relative dir prefix
        self.broken = False

    @classmethod
    def create(cls) -> VaultWatcher | None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return cls(libc, fd) if fd >= 0 else None

    def reset(self) -> None:
        """Forget every watch (before a full rescan re-adds them)."""
        for wd in list(self._dirs):
            self._libc.inotify_rm_watch(self.fd, wd)
        self._dirs.clear()
        self.broken = False
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.fd, 65536):
                pass

    def watch(self, path: str, rel_prefix: str) -> None:
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), _MASK)
        if wd < 0 or (wd in self._dirs and self._dirs[wd] != rel_prefix):
            self.broken = True  # out of watches, or one directory reachable by two paths
            return
        self._dirs[wd] = rel_prefix

    def drain(self) -> set[str] | None:
        """Vault-relative paths of files touched since the last drain, or None: rescan."""
        if self.broken:
            return None
        touched: set[str] = set()
        rescan = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                return None
            if not data:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
                offset += _HEADER.size + length
                if mask & _RESCAN or (
                    mask & IN_ISDIR and mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)
                ):
                    rescan = True  # fmt: skip
                    continue
                prefix = self._dirs.get(wd)
                name = os.fsdecode(raw.rstrip(b"\0"))
                if prefix is None:
                    rescan = True
                elif name and not mask & IN_ISDIR:
                    touched.add(prefix + name)
        return None if rescan else touched

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
