"""The Compare page on two files of one model uploaded together (issue 37, point 3): they are two runs named after
their files, the first file the base (never the better model), the verdict sentence first under the title with the
settings below it, and the same verdict as ``evalcore compare BASE NEW`` on the same pair.

Known answers, counted by hand (the logs of tests/cli/test_compare_cli.py): 200 examples of task qa, ids 0-199,
group law = ids 0-99, math = ids 100-199; model m in both files.

- base.jsonl right on ids 20-199 (0.9), new.jsonl right on ids 80-199 (0.6): new is worse by 30 points, a
  regression; group=law (-60 points) flagged.
- swapped (old.csv right on 80-199, better.csv on 20-199): better is better by 30 points, an improvement, although
  old is the worse run (the page used to take the better model as the base and call this a regression).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from test_pages import assert_no_exception, goto, open_app, shown, texts

N = 200
GROUP = np.where(np.arange(N) < 100, "law", "math")
RIGHT_90, RIGHT_60 = np.arange(N) >= 20, np.arange(N) >= 80


def run_frame(right: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"model": "m", "task": "qa", "example_id": np.arange(N), "group": GROUP,
                         "correct": right.astype(int)})


def upload_together(files: list[tuple[str, bytes]]):
    """Both files chosen at once in the Data page's uploader, then the Compare page."""
    at = open_app()
    at.file_uploader(key="uploader").set_value([(name, data, "text/plain") for name, data in files])
    at.run()
    assert_no_exception(at)
    assert not at.error, texts(at.error)
    return goto(at, "compare")


def answer(at) -> str:
    return shown(at.main.subheader[0].value)


def in_order(block) -> list:
    """The elements of ``block`` in the order the page shows them (containers opened)."""
    out = []
    for child in block.children.values():
        out.extend(in_order(child) if hasattr(child, "children") else [child])
    return out


def jsonl(frame: pd.DataFrame) -> bytes:
    return frame.to_json(orient="records", lines=True).encode()


@pytest.fixture(scope="module")
def regression():
    return upload_together([("base.jsonl", jsonl(run_frame(RIGHT_90))), ("new.jsonl", jsonl(run_frame(RIGHT_60)))])


def test_two_files_of_one_model_are_two_runs_the_first_the_base(regression):
    at = regression
    assert at.selectbox(key="cp_base").options == ["base", "new"]
    assert at.selectbox(key="cp_base").value == "base" and at.selectbox(key="cp_new").value == "new"
    sentence = answer(at)
    assert sentence.startswith("new is worse than base by 30.0 points"), sentence
    assert "200 shared examples" in sentence and "regression" in sentence and "group=law" in sentence


def test_the_verdict_is_the_first_line_under_the_title_and_the_settings_below_it(regression):
    shown_ = in_order(regression.main)
    kinds = [element.type for element in shown_]
    assert kinds[0] == "title" and kinds[1] == "subheader", kinds[:4]
    assert shown(shown_[1].value) == answer(regression)
    keys = [getattr(element, "key", None) for element in shown_]
    assert 1 < keys.index("cp_base") < keys.index("cp_fdr")


def test_a_better_new_run_is_an_improvement_not_a_regression():
    """The worse run's file first: it is the base, whatever the means say."""
    at = upload_together([("old.csv", run_frame(RIGHT_60).to_csv(index=False).encode()),
                          ("better.csv", run_frame(RIGHT_90).to_csv(index=False).encode())])
    assert at.selectbox(key="cp_base").value == "old" and at.selectbox(key="cp_new").value == "better"
    sentence = answer(at)
    assert sentence.startswith("better is better than old by 30.0 points") and "improvement" in sentence, sentence


def test_the_page_and_evalcore_compare_give_the_same_verdict(regression, tmp_path, capsys):
    base, new = tmp_path / "base.jsonl", tmp_path / "new.jsonl"
    base.write_bytes(jsonl(run_frame(RIGHT_90)))
    new.write_bytes(jsonl(run_frame(RIGHT_60)))
    assert main(["compare", str(base), str(new)]) == 3  # a regression
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == answer(regression), (printed[0], answer(regression))
    seen = texts(regression.caption)  # what the comparison could detect: the same line on both
    assert printed[1].startswith("With 200 shared examples this comparison could see changes of ")
    assert printed[1] in seen, (printed[1], seen)
    assert printed[2] == "verdict: regression"


def test_a_file_of_two_models_that_disagrees_with_another_is_refused_on_the_data_page():
    """The conflict message stays where a file holds several models: which of them is which run cannot be told."""
    both = pd.concat([run_frame(RIGHT_90), run_frame(RIGHT_60).assign(model="x")])
    at = open_app()
    at.file_uploader(key="uploader").set_value([("both.csv", both.to_csv(index=False).encode(), "text/csv"),
                                                ("new.csv", run_frame(RIGHT_60).to_csv(index=False).encode(),
                                                 "text/csv")])
    at.run()
    assert_no_exception(at)
    message = " ".join(texts(at.error))
    assert "disagree on the same row" in message and "both.csv holds several models" in message, message


def test_the_page_plans_the_examples_a_comparison_needs(regression):
    """base right on 180 of 200, new on 120, new right only where base is: 60 discordant examples (30%). For 2 points
    at 95% and 80% power the exact McNemar test needs 5,980 shared examples: its exact power there reaches 80% and
    one example fewer does not; Connor's (1987) normal formula, (1.96 sqrt(0.3) + 0.8416 sqrt(0.3 - 0.02^2))^2 /
    0.02^2, promises it with fewer."""
    import math

    from evalcore.compare.power import mcnemar_power

    n = 5980
    assert mcnemar_power(n, 0.3, 0.02, 0.95) >= 0.8 > mcnemar_power(n - 1, 0.3, 0.02, 0.95)
    assert n > math.ceil((1.959963984540054 * math.sqrt(0.3) + 0.8416212335729143 * math.sqrt(0.3 - 0.0004)) ** 2
                         / 0.0004)
    said = [t for t in texts(regression.caption) if t.startswith("To see a change of 2 points")]
    assert said == [f"To see a change of 2 points with 80% power at 95%, when the two runs disagree on 30.0% of the "
                    f"examples as here, a comparison needs about {n:,} shared examples."], said
