"""A reload (a new session on the same address) keeps the upload and the settings (pages/common/session_link.py,
pages/common/upload_store.py); an upload the server no longer holds is said plainly, never replaced by the demo."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from pages.common import upload_store
from pages.common.data_source import digest
from test_pages import APP, TIMEOUT, assert_no_exception, goto, open_app, shown, texts, upload

CSV = b"model,example_id,task,correct\nalpha,1,t,1\nalpha,2,t,0\nbeta,1,t,1\nbeta,2,t,1\ngamma,1,t,0\ngamma,2,t,0\n"
GONE = "The uploaded file is no longer on the server (it was evicted or the server restarted): upload it again"


def reload(at: AppTest, page: str | None = None) -> AppTest:
    """A new session on ``at``'s address (its query parameters; ``page``: its path), as the browser's F5 makes."""
    new = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in at.query_params.items():
        new.query_params[key] = value
    new.run()
    assert_no_exception(new)
    if page is not None:
        goto(new, page)
    return new


def sidebar(at: AppTest) -> list[str]:
    return texts(at.sidebar.caption)


@pytest.fixture(autouse=True)
def empty_store():
    upload_store.uploads().clear()
    yield
    upload_store.uploads().clear()


def test_the_address_names_the_upload_and_the_level_and_a_reload_restores_both():
    at = upload(open_app(), "tiny.csv", CSV)
    key = digest((("tiny.csv", CSV),))
    assert at.query_params["upload"] == key
    assert key in upload_store.uploads()
    at.sidebar.select_slider(key="w_level").set_value(0.9)
    at.run()
    assert at.query_params["level"] == "0.9"
    goto(at, "models")
    at.multiselect(key="w_models").set_value(["alpha", "gamma"])
    at.run()
    assert at.query_params["upload"] == key and at.query_params["level"] == "0.9"
    assert at.query_params["model"] == ["alpha", "gamma"]

    again = reload(at)
    assert "Data: upload · tiny.csv" in sidebar(again)
    assert "2 model(s) · all tasks · all groups · level 90%" in sidebar(again)
    assert again.sidebar.select_slider(key="w_level").value == 0.9
    # the Data page shows the upload again: its one sentence, its columns, no demo
    assert shown(again.subheader[0].value) == "tiny.csv: 3 models, 1 task, 2 examples; 1 note."
    assert any("Columns of tiny.csv" in shown(s.value) for s in again.subheader)
    assert any(t.startswith("Open: tiny.csv, kept on this server for reloads") for t in texts(again.caption))
    goto(again, "models")
    assert again.multiselect(key="w_models").value == ["alpha", "gamma"]


def test_an_upload_no_longer_on_the_server_is_said_plainly_and_the_demo_is_not_shown():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["upload"] = "0" * 64
    at.query_params["level"] = "0.9"
    at.run()
    assert_no_exception(at)
    assert [shown(e.value) for e in at.error] == [GONE + " on the Data page, or load a demo."]
    assert not any("demo" in c for c in sidebar(at) if c.startswith("Data:"))
    assert any("no longer on the server" in c for c in sidebar(at))
    assert at.query_params["upload"] == "0" * 64  # a second reload says the same, not the demo
    goto(at, "leaderboard")
    assert any(GONE in shown(e.value) for e in at.error) and not at.dataframe
    # a new upload replaces the lost one
    upload(at, "tiny.csv", CSV)
    assert "Data: upload · tiny.csv" in sidebar(at)
    assert at.query_params["upload"] == digest((("tiny.csv", CSV),))


def test_an_evicted_upload_is_said_plainly_after_a_reload():
    at = upload(open_app(), "tiny.csv", CSV)
    upload_store.uploads().clear()  # as eviction or a server restart does
    again = reload(at)
    assert any(GONE in shown(e.value) for e in again.error)
    assert not any(c.startswith("Data: demo") for c in sidebar(again))


def test_another_signed_in_user_cannot_open_an_upload_by_its_digest():
    key = digest((("tiny.csv", CSV),))
    upload_store.uploads().put(key, (("tiny.csv", CSV),), owner="ann@example.org")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["upload"] = key
    at.run()
    assert_no_exception(at)
    assert any("belongs to another signed-in user" in shown(e.value) for e in at.error)
    assert not any("upload · tiny.csv" in c for c in sidebar(at))


def test_the_default_demo_keeps_a_clean_address_and_another_demo_is_named():
    at = open_app()
    assert dict(at.query_params) == {}
    at.selectbox(key="demo_choice").set_value("sklearn")  # a form: the choice is sent with the click
    [b for b in at.button if b.label == "Load demo"][0].click()
    at.run()
    assert dict(at.query_params) == {"demo": "sklearn"}
    again = reload(at)
    assert any(c.startswith("Data: demo · Real models") for c in sidebar(again))


def test_a_chosen_column_mapping_is_restored():
    data = b"who,item,ok\nalpha,1,1\nalpha,2,0\nbeta,1,1\nbeta,2,1\n"
    at = upload(open_app(), "renamed.csv", data)
    at.selectbox(key="role_model").set_value("who")
    at.run()
    at.selectbox(key="role_correct").set_value("ok")
    at.run()
    assert_no_exception(at)
    assert '"ok":"correct"' in at.query_params["mapping"]
    again = reload(at)
    assert "Data: upload · renamed.csv" in sidebar(again)
    assert again.selectbox(key="role_correct").value == "ok"


def test_the_data_page_opens_with_one_sentence_about_a_summary_and_about_battles():
    summary = b"model,task,n,n_correct\nalpha,t1,10,7\nalpha,t2,10,5\nbeta,t1,10,6\nbeta,t2,10,9\n"
    at = upload(open_app(), "board.csv", summary)
    sentence = shown(at.subheader[0].value)
    assert sentence.startswith("board.csv: 2 models, 2 tasks") and "examples" not in sentence
    battles = b"model_a,model_b,outcome\nx,y,1\ny,z,0\nx,z,0.5\n"
    at = upload(at, "duels.csv", battles)
    assert shown(at.subheader[0].value).startswith("duels.csv: 3 models, 3 battles")
