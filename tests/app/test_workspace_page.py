"""The Workspace page and "Save to workspace" on the Data page (EVALCORE_WORKSPACE in a temporary folder)."""

from __future__ import annotations

import errno
import os
import sqlite3

import pytest

from evalcore.data.display import literal
from evalcore.workspace import Workspace
from test_pages import assert_no_exception, goto, open_app, shown, texts, upload

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
    table = at.dataframe[0].value  # no analysis yet: the datasets' table is the only one
    assert table[["name", "rows", "models"]].values.tolist() == [["my run", 4, 2]]
    assert any("single-user instance" in t for t in texts(at.caption))
    at.text_input(key=f"ws_dataset_name_{record.id}").set_value("renamed")
    at.button(key="ws_dataset_rename").click()
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


def save_analysis(at, name: str) -> str:
    """Click the sidebar's "Save analysis"; returns the saved analysis's id."""
    at.sidebar.text_input(key="analysis_name").set_value(name)
    [b for b in at.sidebar.button if b.label == "Save"][0].click()
    at.run()
    assert_no_exception(at)
    [link] = [c.value for c in at.sidebar.code]
    assert link.startswith("/?analysis=")
    return link.split("=", 1)[1]


def open_link(analysis_id: str):
    from streamlit.testing.v1 import AppTest

    from test_pages import APP, TIMEOUT

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["analysis"] = analysis_id
    at.run()
    assert_no_exception(at)
    return at


def test_a_saved_analysis_link_restores_view_selection_settings_and_numbers(folder):
    at = open_app()
    goto(at, "models")
    at.multiselect(key="w_models").set_value(["atlas-l", "breeze-7b", "cirrus"])
    at.run()
    goto(at, "leaderboard")
    at.number_input(key="lb_seed").set_value(7)
    at.select_slider(key="lb_boot").set_value(1000)
    at.run()
    before = [t.value.copy() for t in at.dataframe]
    analysis_id = save_analysis(at, "three models, seed 7")
    [record] = Workspace(folder).analyses()
    assert (record.id, record.page, record.name) == (analysis_id, "leaderboard", "three models, seed 7")
    assert record.settings["lb_seed"] == 7 and record.settings["lb_boot"] == 1000
    assert record.selection["models"] == ["atlas-l", "breeze-7b", "cirrus"]
    assert [d.name for d in Workspace(folder).datasets()] == ["demo · synthetic"]  # the demo is saved with it

    other = open_link(analysis_id)
    assert [t.value for t in other.title] == ["Leaderboard"]
    assert other.number_input(key="lb_seed").value == 7 and other.select_slider(key="lb_boot").value == 1000
    after = [t.value for t in other.dataframe]
    assert len(after) == len(before) > 0
    for a, b in zip(after, before):
        assert a.equals(b)
    assert any("workspace · demo · synthetic" in t for t in texts(other.sidebar.caption))
    assert any("3 model(s)" in t for t in texts(other.sidebar.caption))

    del other.query_params["analysis"]  # as a browser's page switch does: the link comes back
    goto(other, "calibration")
    assert other.query_params["analysis"] == analysis_id
    goto(other, "data")
    other.selectbox(key="demo_choice").set_value("battles")  # a form: the choice is sent with the click
    other.button[[b.label for b in other.button].index("Load demo")].click()
    other.run()
    assert_no_exception(other)
    assert "analysis" not in other.query_params  # another dataset: the link no longer describes the page


def test_a_second_analysis_of_an_upload_reuses_the_dataset_saved_with_the_first(folder):
    at = upload(open_app(), "tiny.csv", CSV)
    goto(at, "models")
    first = save_analysis(at, "first")
    goto(at, "calibration")
    second = save_analysis(at, "second")
    [dataset] = Workspace(folder).datasets()
    assert dataset.name == "tiny.csv" and dataset.rows == 4
    assert {Workspace(folder).analysis(i).dataset_id for i in (first, second)} == {dataset.id}


def test_an_unknown_analysis_link_shows_a_message_and_no_data(folder):
    Workspace(folder)
    at = open_link("x" * 32)
    assert [t.value for t in at.title] == ["Saved analysis"]
    assert any("names no saved analysis" in t for t in texts(at.error))
    assert not at.dataframe and not at.get("plotly_chart")
    at.button(key="drop_analysis_link").click()
    at.run()
    assert [t.value for t in at.title] == ["Data"] and "analysis" not in at.query_params


def test_the_workspace_page_lists_renames_opens_and_deletes_analyses(folder):
    at = open_app()
    goto(at, "calibration")
    at.slider(key="cal_bins").set_value(12)
    at.run()
    analysis_id = save_analysis(at, "calibration, 12 bins")
    goto(at, "workspace")
    assert at.subheader[0].value == literal("This instance keeps 1 saved analysis and 1 saved dataset.")  # the answer first
    analyses = at.dataframe[0].value
    assert analyses[["name", "view", "dataset", "owner"]].values.tolist() == [
        ["calibration, 12 bins", "calibration", "demo · synthetic", "(none)"]]
    assert analyses["link"].iloc[0].endswith(f"/?analysis={analysis_id}")
    at.text_input(key=f"ws_analysis_name_{analysis_id}").set_value("renamed")
    at.button(key="ws_analysis_rename").click()
    at.run()
    assert Workspace(folder).analysis(analysis_id).name == "renamed"
    at.button(key="ws_analysis_open").click()
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == ["Calibration"] and at.slider(key="cal_bins").value == 12
    goto(at, "workspace")
    at.checkbox(key="ws_analysis_sure").check()
    at.run()
    at.button(key="ws_analysis_delete").click()
    at.run()
    assert Workspace(folder).analyses() == []
    assert any("No analysis is saved yet" in t for t in texts(at.info))


AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "s" * 32, "client_id": "evalcore",
        "client_secret": "secret", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


def team_app(user: dict, analysis_id: str | None = None):
    """A session of an instance with sign-in for the team.example domain, as ``user``."""
    from streamlit.testing.v1 import AppTest

    from test_pages import APP, TIMEOUT

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = AUTH
    at.secrets["team"] = {"domains": ["team.example"], "emails": ["guest@partner.example"]}
    at.user = user
    if analysis_id:
        at.query_params["analysis"] = analysis_id
    at.run()
    assert_no_exception(at)
    return at


def test_with_sign_in_configured_nothing_shows_before_a_team_member_signs_in(folder):
    at = team_app({"is_logged_in": False})
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.dataframe and [t.value for t in at.title] == ["evalcore"]
    outsider = team_app({"is_logged_in": True, "email": "eve@elsewhere.example", "email_verified": True})
    assert any("not on this instance's team" in t for t in texts(outsider.error))
    assert not outsider.dataframe
    guest = team_app({"is_logged_in": True, "email": "guest@partner.example", "email_verified": True})
    assert [t.value for t in guest.title] == ["Data"]


def test_signed_in_items_are_owned_and_private_until_shared(folder):
    alice = team_app({"is_logged_in": True, "email": "alice@team.example", "email_verified": True})
    assert any("Signed in as alice@" in t for t in texts(alice.sidebar.caption))
    goto(alice, "calibration")
    analysis_id = save_analysis(alice, "alice's")
    [record] = Workspace(folder).analyses(viewer="alice@team.example")
    assert record.owner == "alice@team.example" and not record.shared
    assert Workspace(folder).datasets(viewer="alice@team.example")[0].owner == "alice@team.example"

    bob = team_app({"is_logged_in": True, "email": "bob@team.example", "email_verified": True}, analysis_id)
    assert any("private to the user who saved it" in t for t in texts(bob.error)) and not bob.dataframe

    goto(alice, "workspace")
    assert "private to you" in " ".join(texts(alice.caption))
    alice.toggle(key=f"ws_analysis_shared_{analysis_id}_0").set_value(True)
    alice.run()
    assert_no_exception(alice)
    [dataset] = Workspace(folder).datasets(viewer="bob@team.example")  # shared with the analysis
    assert alice.toggle(key=f"ws_dataset_shared_{dataset.id}_1").value
    bob = team_app({"is_logged_in": True, "email": "bob@team.example", "email_verified": True}, analysis_id)
    assert [t.value for t in bob.title] == ["Calibration"]
    goto(bob, "workspace")
    assert bob.subheader[0].value == literal(
        "You can open 1 saved analysis and 1 saved dataset, 2 of them shared by your team.")
    assert bob.text_input(key=f"ws_analysis_name_{analysis_id}").disabled  # only its owner renames it
    assert any("only its owner can rename or delete it" in t for t in texts(bob.caption))


# ------------------------------------------------------------------------------ refusing disks, teammates, hosting
def refusing_disk(monkeypatch, code: int = errno.EROFS) -> None:
    """Simulate a read-only (or full) disk under the workspace (the tests run as root, which ignores permissions):
    every new file is refused with ``code``, and SQLite reads the catalog only as an immutable file, as where its
    ``-shm`` file cannot be created (tests/unit/test_workspace.py covers the other ways a disk refuses)."""
    from evalcore.workspace import catalog, storage

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    real = sqlite3.connect

    def connect(database, *args, **kwargs):
        if "immutable=1" not in str(database):
            exc = sqlite3.OperationalError("unable to open database file")
            exc.sqlite_errorcode = sqlite3.SQLITE_CANTOPEN
            raise exc
        return real(database, *args, **kwargs)

    monkeypatch.setattr(storage.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(catalog.sqlite3, "connect", connect)


READ_ONLY = "is on a read-only file system (EROFS)"


def test_save_analysis_on_a_read_only_workspace_says_so(folder, monkeypatch):
    Workspace(folder)
    at = open_app()
    goto(at, "models")
    refusing_disk(monkeypatch)
    at.sidebar.text_input(key="analysis_name").set_value("nowhere to go")
    [b for b in at.sidebar.button if b.label == "Save"][0].click()
    at.run()
    assert_no_exception(at)
    [said] = texts(at.sidebar.error)
    assert said.startswith(f"Not saved: The workspace folder {folder}") and READ_ONLY in said
    assert not any("needs fixing" in t for t in texts(at.sidebar.caption)) and not at.sidebar.code
    monkeypatch.undo()
    assert Workspace(folder).analyses() == [] and Workspace(folder).datasets() == []


def test_the_workspace_page_on_a_read_only_folder_lists_and_says_read_only(folder, monkeypatch):
    record = Workspace(folder).add_dataset(CSV, "kept run")
    refusing_disk(monkeypatch)
    at = open_app()
    goto(at, "workspace")
    [said] = texts(at.warning)
    assert said.startswith(f"Read-only: The workspace folder {folder}") and READ_ONLY in said
    assert at.dataframe[0].value["name"].tolist() == ["kept run"]
    assert at.button(key="ws_dataset_rename").disabled and at.checkbox(key="ws_sure").disabled
    assert at.text_input(key=f"ws_dataset_name_{record.id}").disabled


def test_deleting_a_dataset_a_teammates_analysis_uses_is_refused_naming_it(folder):
    ws = Workspace(folder)
    dataset = ws.add_dataset(CSV, "alice's run", owner="alice@team.example", shared=True)
    ws.save_analysis(dataset.id, "models", name="alice's view", owner="alice@team.example")
    ws.save_analysis(dataset.id, "calibration", name="bob's view", owner="bob@team.example")
    alice = team_app({"is_logged_in": True, "email": "alice@team.example", "email_verified": True})
    goto(alice, "workspace")
    alice.selectbox(key="ws_dataset").set_value(
        next(o for o in alice.selectbox(key="ws_dataset").options if o.startswith("alice's run")))
    alice.run()
    assert any("other people's saved analyses use it: “bob's view” (bob@team.example)" in t
               for t in texts(alice.error))
    assert not [b for b in alice.button if b.key == "ws_delete"]
    assert len(Workspace(folder).analyses(viewer="bob@team.example")) == 1
    assert [d.name for d in Workspace(folder).datasets(viewer="alice@team.example")] == ["alice's run"]


@pytest.fixture()
def listening_on():
    """Set Streamlit's ``server.address`` for the test (as ``--server.address`` does), then put it back."""
    from streamlit import config

    original = config.get_option("server.address")
    yield lambda address: config.set_option("server.address", address)
    config.set_option("server.address", original)


@pytest.mark.parametrize("allowed", [False, True])
def test_an_instance_reachable_without_sign_in_keeps_saved_items_read_only_unless_allowed(
        folder, monkeypatch, listening_on, allowed):
    from pages.common import hosting

    listening_on("0.0.0.0")
    if allowed:
        monkeypatch.setenv("EVALCORE_ALLOW_ANONYMOUS_CHANGES", "1")
    record = Workspace(folder).add_dataset(CSV, "a run")
    at = upload(open_app(), "tiny.csv", CSV)
    save = at.button[[b.label for b in at.button].index("Save to workspace")]
    assert save.disabled is not allowed and (hosting.READ_ONLY in shown(save.help or "")) is not allowed
    goto(at, "models")
    [save] = [b for b in at.sidebar.button if b.label == "Save"]
    assert save.disabled is not allowed and (hosting.READ_ONLY in shown(save.help or "")) is not allowed
    goto(at, "workspace")
    rename = at.button(key="ws_dataset_rename")
    assert rename.disabled is not allowed and (hosting.READ_ONLY in shown(rename.help or "")) is not allowed
    assert at.text_input(key=f"ws_dataset_name_{record.id}").disabled is not allowed
    assert at.checkbox(key="ws_sure").disabled is not allowed
    listening_on("127.0.0.1")  # loopback: only this machine reaches it
    at.run()
    assert not at.button(key="ws_dataset_rename").disabled


@pytest.mark.parametrize(("address", "reachable"), [
    (None, True), ("", True), ("0.0.0.0", True), ("::", True), ("10.1.2.3", True), ("evalcore.example.org", True),
    ("127.0.0.1", False), ("127.1.2.3", False), ("localhost", False), ("::1", False), ("[::1]", False),
])
def test_which_addresses_others_can_reach(listening_on, address, reachable):
    from pages.common import hosting

    listening_on(address)
    assert hosting.reachable_by_others() is reachable


@pytest.mark.parametrize(("value", "allowed"), [("1", True), ("true", True), ("YES", True), ("0", False),
                                                 ("", False), ("no", False)])
def test_anonymous_changes_are_allowed_only_when_asked_for(monkeypatch, listening_on, value, allowed):
    from pages.common import hosting

    monkeypatch.setenv("EVALCORE_ALLOW_ANONYMOUS_CHANGES", value)
    listening_on("0.0.0.0")
    assert hosting.anonymous_changes_allowed() is allowed and hosting.changes_allowed() is allowed
    assert hosting.open_instance_warning() == (hosting.OPEN_CHANGES if allowed else hosting.READ_ONLY)
    listening_on("127.0.0.1")
    assert hosting.changes_allowed() and hosting.open_instance_warning() is None
