"""Names from an uploaded file are data: every page shows them literally and every CSV download neutralizes them.

A log whose model, task, group and category names (and file name) are Markdown, HTML, LaTeX, Streamlit directives,
emoji shortcodes, image links and spreadsheet formulas is uploaded through the Data page and every page is visited.
What the pages send to the browser is checked as sent: Markdown bodies and labels carry the escaped names
(``evalcore.data.display.literal``), never the raw ones; plotly figures carry no raw name; every CSV payload served by a
download button has no cell or header a spreadsheet would read as a formula.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from benchmarks.hostile import names_log
from evalcore.data.display import WORD_JOINER, literal, plotly_literal
from evalcore.data.export import neutralize
from evalcore.data.validation import validate
from evalcore.stats.overall import overall_table
from test_pages import assert_no_exception, csv_bytes, open_app, shown, upload

MODELS = ['=HYPERLINK("http://example.invalid/")', "**bold** <b>m</b>", "+1+1 :red[red] :smile:", "@SUM(1) $x$"]
TASKS = {"![t](http://127.0.0.1:9/x.png)": "=cat", '<a href="http://example.invalid/">t</a>': ":material/home:",
         "-2+3 _t_": "$c$ <br>"}
GROUPS = ["`g1`", "# g2", "- g3", "\t=g4"]
FILENAME = "**f**![f](http://127.0.0.1:9/f.png).csv"
HOSTILE = [*MODELS, *TASKS, *TASKS.values(), *GROUPS, FILENAME]
PAGES = ["data", "models", "calibration", "subgroups", "leaderboard", "compare", "sampling", "autoeval"]
MARKDOWN = ["title", "subheader", "caption", "markdown", "info", "warning", "error", "success"]
LABELLED = ["tabs", "number_input", "selectbox", "multiselect", "radio", "checkbox", "text_input", "slider",
            "select_slider", "toggle", "button", "download_button", "expander"]


@pytest.fixture
def served(monkeypatch) -> list[tuple[bytes, str, str | None]]:
    """Every file a download button serves during the test: (bytes, mimetype, file name)."""
    files: list[tuple[bytes, str, str | None]] = []
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        files.append((path_or_data, mimetype, filename))
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


def visit(at, page: str):
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert_no_exception(at)
    return at


def markdown_texts(at) -> list[tuple[str, str]]:
    """(element type, Markdown source) of everything Streamlit renders as Markdown: bodies, labels, radio options."""
    out = []
    for root in (at.main, at.sidebar):
        for kind in MARKDOWN:
            out += [(kind, e.value) for e in root.get(kind)]
        for kind in LABELLED:
            out += [(kind, e.label) for e in root.get(kind)]
        out += [("radio option", str(o)) for e in root.get("radio") for o in e.options]
    return out


def figure_strings(at) -> list[str]:
    def walk(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)

    return [s for chart in at.get("plotly_chart") for s in walk(json.loads(chart.proto.spec))]


def test_every_page_shows_hostile_names_literally(served):
    at = open_app()
    upload(at, FILENAME, csv_bytes(names_log(MODELS, TASKS, GROUPS, seed=3)))
    seen: dict[str, list[tuple[str, str]]] = {}
    for page in PAGES:
        visit(at, page)
        texts = markdown_texts(at)
        seen[page] = texts
        for kind, text in texts:
            for name in HOSTILE:  # apart from its escaped form (which may contain it: '\\=cat'), no raw name
                assert name not in text.replace(literal(name), ""), f"{page}: raw name {name!r} in a {kind}: {text!r}"
        for text in figure_strings(at):
            for name in HOSTILE:
                assert name not in text.replace(plotly_literal(name), ""), f"{page}: raw {name!r} in a figure: {text!r}"

    def shown_on(page: str, kind: str, fragment: str) -> bool:
        return any(k == kind and fragment in t for k, t in seen[page])

    # the escaped names are there (not dropped): known answers on each page
    assert shown_on("data", "subheader", f"Columns of {literal(FILENAME)}")
    assert shown_on("data", "success", f"upload · {literal(FILENAME)}: a **log** table")
    assert shown_on("models", "caption", f"Data: upload · {literal(FILENAME)}")   # the sidebar
    tabs = [t for k, t in seen["calibration"] if k == "tabs"]  # the leader's first, then the others in order
    assert sorted(tabs) == sorted(literal(m) for m in MODELS) and tabs[1:] == sorted(tabs[1:])
    assert literal("**bold** <b>m</b>") == r"\*\*bold\*\* \<b\>m\<\/b\>"
    assert shown_on("subgroups", "caption", f"{literal(MODELS[3])}: overall accuracy")  # the leader opens the forest
    for category in TASKS.values():
        assert shown_on("leaderboard", "number_input", literal(category))
    leader = str(overall_table(validate(names_log(MODELS, TASKS, GROUPS, seed=3))).iloc[0]["model"])
    assert shown_on("sampling", "caption", f"examples of {literal(leader)} (all tasks)")  # it opens on the leader
    # the charts carry the escaped names (tick labels, legends, hover)
    visit(at, "calibration")
    charts = figure_strings(at)
    for model in MODELS:
        assert any(plotly_literal(model) in s for s in charts), model

    # every CSV served: neutralized cells and headers, the hostile names among them
    tables = [data for data, mimetype, _ in served if mimetype == "text/csv"]
    assert len(tables) >= 20
    cells = [cell for data in tables for row in csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
             for cell in row]
    risky = [cell for cell in cells if neutralize(cell) != cell]
    assert not risky, f"cells a spreadsheet would run as formulas: {sorted(set(risky))[:10]}"
    assert "'" + MODELS[0] in cells and "'=cat" in cells and "'\t=g4" in cells
    headers = [next(csv.reader(io.StringIO(data.decode("utf-8")))) for data in tables]
    assert any("'=cat" in header for header in headers)  # the wide leaderboard: one column per category


def test_error_messages_show_names_from_the_file_literally():
    """Messages built from the file's column names and values (EvalDataError, the mapping check) are escaped."""
    column = "**sys** :red[x] ![i](http://127.0.0.1:9/c.png)"
    at = open_app()
    content = f'"{column}",qid,correct,confidence\na,1,1,0.9\na,2,0,0.4\nb,1,1,0.8\nb,2,1,0.7\n'.encode()
    upload(at, FILENAME, content)
    at.selectbox(key="role_model").set_value(column)
    at.selectbox(key="role_example_id").set_value(column)
    at.run()
    assert_no_exception(at)
    errors = [e.value for e in at.error]
    assert any(f"Column '{literal(column)}' is chosen for the roles model and example_id" in e for e in errors), errors
    assert not any(column in e for e in errors)

    model = "**m** :red[x]"
    at = open_app()  # a repeated (model, example_id) pair: the validation message quotes the model
    upload(at, FILENAME, f'model,example_id,correct\n"{model}",1,1\n"{model}",1,0\nb,1,1\n'.encode())
    errors = [e.value for e in at.error]
    assert any(f"e.g. model='{model}'" in e for e in map(shown, errors)), errors
    assert any(f"model\\=\\'{literal(model)}\\'" in e for e in errors), errors
    assert not any(model in e for e in errors)

    ignored = "=cat ![i](http://127.0.0.1:9/c.png)"
    at = open_app()  # a text column without a role: the validation note names it
    upload(at, FILENAME, f'model,"{ignored}",correct\nm,x,1\nb,y,1\n'.encode())
    notes = [i.value for i in at.info]
    assert any(n.endswith(f"ignored\\:{WORD_JOINER} {literal(ignored)}\\.") for n in notes), notes

    at = open_app()
    upload(at, FILENAME, b"\x00\x01 not a table")
    errors = [e.value for e in at.error]
    assert any(e.startswith(f"**{literal(FILENAME)}** cannot be read: ") for e in errors), errors
