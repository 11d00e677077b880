"""The Data page with several tools' files: it names the tool of every file, warns about a file it left out, and
shows each example's text as written."""

from __future__ import annotations

from test_pages import assert_no_exception, goto, open_app, report_counts, table_with, texts


def test_tools_are_named_a_bad_file_is_left_out_and_text_is_shown_as_written(shared_file):
    inspect = shared_file("ecosystem/inspect_ai/data_arc_qwen.json")
    table = b"model,example_id,correct,prompt,response\nmine,1,1,**What** is <b>2+2</b>?,=4\n"
    files = [(inspect.name, inspect.read_bytes(), "application/json"), ("mine.csv", table, "text/csv"),
             ("settings.json", b'{\n  "lr": {"value": 0.1}\n}\n', "application/json")]
    at = open_app()
    goto(at, "data")
    at.file_uploader(key="uploader").set_value(files)
    at.run()
    assert_no_exception(at)
    assert report_counts(at)[1:] == (4, 2)
    warnings = texts(at.warning)
    assert any(w.startswith("settings.json was left out: this JSON is not a log evalcore recognises") for w in warnings)
    read = table_with(at, "file", "read as")
    assert dict(zip(read["file"], read["read as"])) == {"data_arc_qwen.json": "Inspect AI", "mine.csv": "a plain table"}
    preview = table_with(at, "model", "input", "output")
    mine = preview[preview["model"] == "mine"].iloc[0]
    assert mine["input"] == "**What** is <b>2+2</b>?" and mine["output"] == "=4"  # literally, no Markdown or HTML
