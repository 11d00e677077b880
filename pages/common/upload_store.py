"""Uploads kept for reloads: a process-wide store of uploaded files, keyed by their content digest.

A reload (F5) starts a new Streamlit session, whose ``st.session_state`` is empty. So that it can reopen the upload,
the bytes of each upload are also kept here, and the session's address carries their digest
(:mod:`.session_link`). The store lives in this server's memory, least recently used first out once the total
passes ``EVALCORE_UPLOAD_STORE_MB`` megabytes (default 512): a server restart or eviction loses an
entry, and the page then says so.

The digest acts as a capability: only someone holding the address (the user who uploaded, or whom they sent it
to) can reopen the upload. With sign-in on, an entry is also tied to the signed-in users who uploaded those bytes:
another user holding the digest is refused. Uploaded data is never listed or shared: saving it to the workspace
is what makes it visible to others.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from evalcore.data.limits import MB, env_number

Files = tuple[tuple[str, bytes], ...]

#: what :meth:`UploadStore.get` found
FOUND, MISSING, FORBIDDEN = "found", "missing", "forbidden"


@dataclass
class _Entry:
    files: Files
    size: int
    owners: set = field(default_factory=set)  # signed-in users who uploaded these bytes; empty: no sign-in


def size_of(files: Files) -> int:
    """Bytes an upload holds (its names and contents)."""
    return sum(len(name.encode("utf-8", "replace")) + len(data) for name, data in files)


class UploadStore:
    """A thread-safe LRU mapping digest -> files, bounded by the total size of the files.

    An upload larger than the whole budget is not kept (a reload then says it is no longer on the server)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._data: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, digest: str, files: Files, owner: str | None = None) -> bool:
        """Keep ``files`` under ``digest`` for ``owner`` (None: an instance without sign-in); returns whether they
        are kept. Least recently used entries leave until the total fits the budget."""
        size = size_of(files)
        with self._lock:
            entry = self._data.get(digest)
            if entry is None:
                if size > self.max_bytes:
                    return False
                entry = self._data[digest] = _Entry(tuple(files), size)
                self.bytes += size
            if owner is not None:
                entry.owners.add(owner)
            self._data.move_to_end(digest)
            while self.bytes > self.max_bytes:
                _, old = self._data.popitem(last=False)
                self.bytes -= old.size
            return digest in self._data

    def get(self, digest: str, viewer: str | None = None) -> tuple[str, Files | None]:
        """(FOUND, files), (MISSING, None) when the digest is not (or no longer) here, or (FORBIDDEN, None) when
        signed-in users uploaded it and ``viewer`` is not one of them."""
        with self._lock:
            entry = self._data.get(digest)
            if entry is None:
                return MISSING, None
            if entry.owners and viewer not in entry.owners:
                return FORBIDDEN, None
            self._data.move_to_end(digest)
            return FOUND, entry.files

    def __contains__(self, digest: str) -> bool:
        with self._lock:
            return digest in self._data

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0


_STORE: UploadStore | None = None
_STORE_LOCK = threading.Lock()


def budget_bytes() -> int:
    """``EVALCORE_UPLOAD_STORE_MB`` (default 512) in bytes."""
    return int(env_number("EVALCORE_UPLOAD_STORE_MB", 512) * MB)


def uploads() -> UploadStore:
    """The process-wide store (created on first use, with the budget of the environment then)."""
    global _STORE
    with _STORE_LOCK:
        if _STORE is None:
            _STORE = UploadStore(budget_bytes())
        return _STORE
