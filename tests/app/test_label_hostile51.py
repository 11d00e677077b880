"""The Label page under hostile use (issue 51): without sign-in no owned campaign opens, a typed address is refused,
a read-only instance records no label, a full or read-only workspace is said in the workspace's words, and stored
text past today's bounds is shown cut."""

from __future__ import annotations

import errno
import os
import sqlite3

import pytest
from streamlit import config

from evalcore.errors import EvalDataError
from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace, catalog
from evalcore.workspace.storage import storage_problem
from test_label_page import _pool_csv
from test_pages import assert_no_exception, open_page, texts

BOB = "bob@team.org"


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def _campaign(folder, owner: str | None = None) -> Campaign:
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool", owner=owner)
    return Campaign.create(ws, record.id, "m", "srs", budget=40, seed=3, owner=owner)


def _keys(at) -> list[str]:
    return [t.key for t in at.text_input]


def test_without_sign_in_an_owned_campaign_does_not_open(folder):
    campaign = _campaign(folder, owner=BOB)
    at = open_page("label", campaign=campaign.id)
    assert_no_exception(at)
    assert any("belongs to an owner, and nobody is signed in here" in t for t in texts(at.error))
    assert "label_annotator" not in _keys(at) and not at.text


def test_a_typed_address_is_refused_and_records_nothing(folder):
    campaign = _campaign(folder)
    at = open_page("label", campaign=campaign.id)
    at.text_input(key="label_annotator").set_value("alice@example.org")
    at.run()
    assert_no_exception(at)
    assert any("looks like an e-mail address" in t for t in texts(at.error))
    assert "label_correct" not in [b.key for b in at.button]
    assert campaign.history().empty and campaign.next("alice") == campaign.export()["example_id"].iloc[0]


@pytest.fixture()
def on_the_network():
    previous = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    yield
    config.set_option("server.address", previous)


def test_a_read_only_instance_records_no_label(folder, on_the_network, monkeypatch):
    monkeypatch.delenv("EVALCORE_ALLOW_ANONYMOUS_CHANGES", raising=False)
    campaign = _campaign(folder)
    at = open_page("label", campaign=campaign.id, annotator="mallory")
    assert_no_exception(at)
    assert any("No label is recorded in this session" in t and "read-only" in t for t in texts(at.info))
    assert "label_annotator" not in _keys(at) and "label_correct" not in [b.key for b in at.button]
    assert campaign.history().empty and len(campaign.export()) == 40


def test_a_right_to_left_override_in_a_campaign_name_does_not_act(folder):
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool")
    campaign = Campaign.create(ws, record.id, "m", "srs", budget=40, seed=3, name="eval\u202etxt.exe")
    at = open_page("label", campaign=campaign.id)
    assert_no_exception(at)
    shown = texts(at.caption) + texts(at.markdown) + [t.value for t in at.text]
    assert any("eval\\u202etxt.exe" in t for t in shown)
    assert not any("\u202e" in t for t in shown)


@pytest.mark.parametrize("code, said", [(errno.ENOSPC, "is full (ENOSPC"), (errno.EROFS, "read-only file system")])
def test_a_full_or_read_only_workspace_is_said_in_the_workspaces_words(folder, monkeypatch, code, said):
    campaign = _campaign(folder)
    refused = EvalDataError(storage_problem(folder, OSError(code, os.strerror(code))))

    def connect(path):
        raise refused

    monkeypatch.setattr(catalog, "connect", connect)  # every write of the catalog, as the disk would refuse it
    at = open_page("label", campaign=campaign.id, annotator="ann")
    assert_no_exception(at)
    assert any(said in t and str(folder) in t for t in texts(at.error))
    assert "label_correct" not in [b.key for b in at.button]
    monkeypatch.undo()
    assert campaign.history().empty


def test_a_note_past_the_bound_is_refused_and_one_stored_before_is_shown_cut(folder):
    campaign = _campaign(folder)
    at = open_page("label", campaign=campaign.id, annotator="ann")
    at.text_input(key="label_note").set_value("n" * 10_001)
    at.button(key="label_correct").click()
    at.run()
    assert_no_exception(at)
    assert any("The note has 10,001 characters; it may have at most 10,000" in t for t in texts(at.error))
    assert campaign.history().empty

    from test_label_page import _signed_in

    owner, alice, bob = "olivia@team.example", "alice@team.example", "bob@team.example"
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool", owner=owner, shared=True)
    shared = Campaign.create(ws, record.id, "m", "srs", budget=40, seed=3, owner=owner, shared=True, overlap=2)
    example = shared.next(alice)
    shared.next(bob)
    shared.record(example, alice, 1)
    shared.record(example, bob, 0, note="short")
    db = sqlite3.connect(ws.catalog)  # a note of 5 million characters, stored before the bound existed
    db.execute("UPDATE labels SET note = ? WHERE campaign_id = ? AND annotator = ?", ("z" * 5_000_000, shared.id, bob))
    db.commit()
    db.close()
    at = _signed_in(owner, shared.id)
    assert_no_exception(at)
    [line] = [t.value for t in at.text if t.value.startswith(f"{bob}: incorrect")]
    assert line == f"{bob}: incorrect (note: {'z' * 10_000}…(cut))"
