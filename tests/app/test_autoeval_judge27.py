"""Issue 27, point 3, in the dashboard: battles decided by an AI judge alone (AlpacaEval annotations; battles without
any human vote, in memory and in the engine) get the AI judge's own Bradley-Terry ranking on the AI-assisted page and
in the report, labelled as the judge's -- never as human votes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.data.validation import validate
from evalcore.ppi.bradley_terry import bradley_terry_of_log
from pages.common.report_cache import Built
from pages.common.store import store
from test_engine_pages import open_saved
from test_pages import assert_no_exception, goto, open_app, texts, upload

ALPACA = "ecosystem/alpaca_eval/alpaca-7b/alpaca_eval_gpt4/annotations.json"
JUDGE_METHOD = "AI judge only (no human votes)"


def _plain(value: str) -> str:
    return value.replace("\\", "").replace("\u2060", "")


def test_alpaca_eval_annotations_give_the_judges_ranking(shared_file):
    path = shared_file(ALPACA)
    at = open_app()
    upload(at, path.name, path.read_bytes(), "application/json")
    at.switch_page("pages/autoeval.py")
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    answer, heading = (_plain(h.value) for h in at.subheader)
    assert heading == "The AI judge's Bradley-Terry ranking (no human votes)"
    # the judge prefers alpaca-7b in 213 of 805 battles: text_davinci_003 leads at ln(592/213) = 1.02
    assert answer.startswith("By the AI judge's verdicts alone (805 battles, no human vote), text_davinci_003 leads "
                             "on strength (log-odds against alpaca-7b) at 1.02 ")
    table = at.dataframe[0].value.set_index("model")
    assert set(table["method"]) == {JUDGE_METHOD}
    assert table.loc["text_davinci_003", "coefficient"] == pytest.approx(math.log(592 / 213), abs=1e-6)
    shown = " ".join(texts(at.caption) + texts(at.info) + [answer, heading])
    assert "not for people's" in shown and "human-judged" not in shown and "battles with a human vote" not in shown
    assert "the human votes correct" not in shown


def test_judge_only_battles_in_the_engine(tmp_path, monkeypatch):
    from evalcore.demo.synthetic import pairwise_battles

    battles = pairwise_battles(0, n_models=4, n_battles=1500).battles.drop(columns="outcome")
    at, _ = open_saved(tmp_path, monkeypatch, battles, "judged")
    at.switch_page("pages/autoeval.py")
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    table = at.dataframe[0].value.set_index("model")
    assert set(table["method"]) == {JUDGE_METHOD}
    expected = bradley_terry_of_log(validate(battles)).set_index("model")
    assert expected.attrs["labels"] == "judge"
    np.testing.assert_allclose(table.loc[expected.index, "coefficient"], expected["coefficient"], atol=1e-9)
    assert any(_plain(h.value).startswith("By the AI judge's verdicts alone (1,500 battles, no human vote)")
               for h in at.subheader)
    goto(at, "report")
    built = [value for value, _ in store()._data.values() if isinstance(value, Built)][-1]
    assert built.sections == ("Pairwise battles: the AI judge's ranking (Bradley-Terry)",)
    assert built.summary[0].endswith("(the AI judge's verdicts only, no human votes).")
