"""At most a few script runs compute at once; the others wait for a slot, holding nothing.

Every session's script run is a thread of the one server process, and Python runs one thread at a time (the GIL).
When a dozen sessions compute at once, the thread of the web server's event loop waits its turn behind each of them
(about 5 ms a turn, many turns per request), so ``/_stcore/health`` and every page's messages slow to seconds, and the
runs themselves finish no sooner: two cores do the same work whatever the number of threads. So each script run
(:mod:`app`) first takes one of ``EVALCORE_SCRIPT_RUNS`` slots (default two per core). A run waiting for a slot holds
no lock, and every cached computation runs inside a slot (a run that waits for another session's result, see
:func:`.store.once`, waits for a run that holds a slot and goes on), so waiting never deadlocks.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from evalcore.data.limits import env_number

_SLOTS = threading.BoundedSemaphore(env_number("EVALCORE_SCRIPT_RUNS", 2 * (os.cpu_count() or 1)))
#: how long a run waits for a slot before it says so on the page (it keeps waiting)
PATIENCE_S = 0.5


@contextlib.contextmanager
def slot(waiting) -> Iterator[None]:
    """Hold a slot for the block; ``waiting()`` is entered (e.g. a spinner) when none is free at once."""
    if not _SLOTS.acquire(timeout=PATIENCE_S):
        with waiting():
            _SLOTS.acquire()
    try:
        yield
    finally:
        _SLOTS.release()
