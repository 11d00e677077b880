"""The Workspace page and "Save to workspace" on the Data page (EVALCORE_WORKSPACE in a temporary folder)."""

from __future__ import annotations

import pytest

from evalcore.workspace import Workspace
from test_pages import assert_no_exception, goto, open_app, texts, upload

CSV = b"model,example_id,correct\nalpha,1,1\nalpha,2,0\nbeta,1,1\nbeta,2,1\n"


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def test_save_list_open_rename_delete(folder):
    at = upload(open_app(), "tiny.csv", CSV)
    assert any("stays in this session only" in t for t in texts(at.caption))
    at.text_input(key="save_name").set_value("my run")
    at.button[[b.label for b in at.button].index("Save to workspace")].click()
    at.run()
    assert_no_exception(at)
    [record] = Workspace(folder).datasets()
    assert (record.name, record.rows, record.models) == ("my run", 4, 2)
    assert any("workspace · my run" in t for t in texts(at.sidebar.caption))

    goto(at, "workspace")
    table = at.dataframe[0].value
    assert table[["name", "rows", "models"]].values.tolist() == [["my run", 4, 2]]
    assert any("single-user instance" in t for t in texts(at.caption))
    at.text_input(key=f"ws_name_{record.id}").set_value("renamed")
    at.button(key="ws_rename").click()
    at.run()
    assert [d.name for d in Workspace(folder).datasets()] == ["renamed"]
    at.checkbox(key="ws_sure").check()
    at.run()
    at.button(key="ws_delete").click()
    at.run()
    assert_no_exception(at)
    assert Workspace(folder).datasets() == []
    assert any("Nothing is saved yet" in t for t in texts(at.info))


def test_a_saved_dataset_opens_in_a_new_session(folder):
    record = Workspace(folder).add_dataset(CSV, "shared run")
    at = open_app()
    goto(at, "workspace")
    at.button(key="ws_open").click()
    at.run()
    assert_no_exception(at)
    assert any("workspace · shared run" in t for t in texts(at.sidebar.caption))
    assert record.id
