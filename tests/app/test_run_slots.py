"""Script runs take a slot (pages.common.run_slots): beyond the bound a run waits, saying so, and goes on when a slot
is free."""

from __future__ import annotations

import contextlib
import threading

from pages.common import run_slots


def test_a_run_beyond_the_bound_waits_for_a_free_slot(monkeypatch):
    monkeypatch.setattr(run_slots, "_SLOTS", threading.BoundedSemaphore(1))
    monkeypatch.setattr(run_slots, "PATIENCE_S", 0.05)
    waited, done = threading.Event(), threading.Event()

    @contextlib.contextmanager
    def waiting():
        waited.set()
        yield

    def second_run():
        with run_slots.slot(waiting):
            done.set()

    with run_slots.slot(waiting):
        worker = threading.Thread(target=second_run)
        worker.start()
        assert waited.wait(5)  # told to wait: the one slot is held here
        assert not done.wait(0.2)
    worker.join(5)
    assert done.is_set()
    with run_slots.slot(waiting):  # the slot came back
        pass
