"""Several files into one log (evalcore.importers.combine / detect / archive) and battles with ties."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd
import pytest

from evalcore.ppi.bradley_terry import ppi_bradley_terry
from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, read_and_validate, report_of, validate
from evalcore.importers import read_logs
from evalcore.importers.archive import open_zip, zip_members
from evalcore.data.limits import Budget, ReadLimits


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def _model_log(model: str, task: str = "t", n: int = 4, offset: int = 0) -> pd.DataFrame:
    return pd.DataFrame({"model": model, "task": task, "question_id": [str(i) for i in range(n)],
                         "is_correct": [(i + offset) % 2 for i in range(n)]})


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_runs_of_two_models_in_two_files_become_one_log():
    frame = load_eval_logs([("a.csv", _csv(_model_log("a"))), ("b.csv", _csv(_model_log("b", offset=1)))])
    assert sorted(frame["model"].unique()) == ["a", "b"] and len(frame) == 8
    assert frame.groupby("model")["correct"].sum().to_dict() == {"a": 2.0, "b": 2.0}
    report = report_of(frame)
    assert report.files == ("a.csv", "b.csv")
    assert any("a plain table (2 files)" in note for note in report.notes)


def test_the_same_file_twice_is_counted_once_with_a_note():
    data = _csv(_model_log("a"))
    frame = load_eval_logs([("a.csv", data), ("copy.csv", data)])
    assert len(frame) == 4
    assert any("4 rows appear identically in several files" in n for n in report_of(frame).notes)


def test_conflicting_rows_are_refused_with_their_ids_and_files():
    """A file of two models disagreeing with another file on a row of model a: which of its models is which run
    cannot be told (two files of one model each become runs: tests/unit/test_combine_runs37.py)."""
    both = pd.concat([_model_log("a"), _model_log("b")])
    with pytest.raises(EvalDataError, match=r"model='a'.*example_id='0'.*a\.csv and b\.csv give it different "
                                            r"values.*but a\.csv holds several models"):
        load_eval_logs([("a.csv", _csv(both)), ("b.csv", _csv(_model_log("a", offset=1)))])


def test_ids_numbered_within_tasks_are_made_unique_across_tasks():
    frame = load_eval_logs([("t1.csv", _csv(_model_log("a", "t1"))), ("t2.csv", _csv(_model_log("a", "t2")))])
    assert len(frame) == 8 and frame["example_id"].str.startswith(("t1/", "t2/")).all()


def test_files_of_different_shapes_are_refused_together():
    battles = pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "outcome": [1]})
    with pytest.raises(EvalDataError, match=r"different shapes.*battles: b\.csv"):
        load_eval_logs([("a.csv", _csv(_model_log("a"))), ("b.csv", _csv(battles))])


def test_a_zip_of_a_folder_is_read_as_its_files_and_macos_metadata_is_skipped():
    data = _zip({"run/a.csv": _csv(_model_log("a")), "run/b.csv": _csv(_model_log("b")),
                 "__MACOSX/run/._a.csv": b"\x00\x05junk"})
    frame = load_eval_log(("run.zip", data))
    assert sorted(frame["model"].unique()) == ["a", "b"]


def test_a_folder_path_is_read_as_its_files(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "a.csv").write_bytes(_csv(_model_log("a")))
    (tmp_path / "run" / "b.csv.gz").write_bytes(__import__("gzip").compress(_csv(_model_log("b"))))
    frame = load_eval_log(tmp_path / "run")
    assert sorted(frame["model"].unique()) == ["a", "b"] and len(frame) == 8


def test_zip_bomb_stops_at_the_size_limit():
    data = _zip({"big.csv": b"model,correct\n" + b"a,1\n" * 300_000})
    assert len(data) < 20_000
    with pytest.raises(EvalDataError, match="expands beyond"):
        zip_members(data, "bomb.zip", Budget(ReadLimits(max_bytes=1_000_000)))


def test_a_corrupt_zip_names_the_file():
    data = _zip({"a.csv": _csv(_model_log("a"))})
    with pytest.raises(EvalDataError, match="run.zip"):
        load_eval_log(("run.zip", data[: len(data) // 2]))


def test_one_plain_table_keeps_its_own_columns_for_the_mapping():
    raw = read_logs([("x.csv", _csv(_model_log("a")))])
    assert not raw.mapped and "question_id" in raw.frame.columns
    table = read_and_validate(("x.csv", _csv(_model_log("a"))), {"model": "model", "question_id": "example_id",
                                                                  "is_correct": "correct", "task": None})
    assert table.frame is not None and set(table.frame["task"]) == {"all"}


def test_single_model_summary_and_battles_load():
    summary = validate(pd.DataFrame({"model": ["a"], "task": ["t"], "n": [10], "n_correct": [7]}))
    assert report_of(summary).n_models == 1
    battles = validate(pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "outcome": [0.5]}))
    assert battles["outcome"].tolist() == [0.5]
    assert any("1 battles are ties" in n for n in report_of(battles).notes)


def test_battle_outcomes_outside_zero_one_are_refused():
    with pytest.raises(EvalDataError, match="must lie in"):
        validate(pd.DataFrame({"model_a": ["a", "a"], "model_b": ["b", "b"], "outcome": [1, 2]}))


def test_bradley_terry_counts_a_tie_as_half_a_win():
    """b beats a 3 times, loses 1, ties 2: the MLE has P(b beats a) = (3 + 2/2) / 6."""
    labeled = pd.DataFrame({"model_a": ["a"] * 6, "model_b": ["b"] * 6, "outcome": [1, 1, 1, 0, 0.5, 0.5]})
    table = ppi_bradley_terry(labeled, labeled.iloc[0:0], lam=0.0, reference="a")
    zeta_b = float(table.set_index("model").loc["b", "coefficient"])
    assert 1 / (1 + np.exp(-zeta_b)) == pytest.approx(4 / 6, abs=1e-6)


def test_bradley_terry_with_a_tie_between_otherwise_undefeated_groups_exists():
    """a always beats b, but they tied once: each won part of a comparison, so Ford's condition holds."""
    labeled = pd.DataFrame({"model_a": ["a", "a", "a"], "model_b": ["b", "b", "b"], "outcome": [0, 0, 0.5]})
    table = ppi_bradley_terry(labeled, labeled.iloc[0:0], lam=0.0, reference="a")
    zeta_b = float(table.set_index("model").loc["b", "coefficient"])
    assert 1 / (1 + np.exp(-zeta_b)) == pytest.approx(0.5 / 3, abs=1e-6)


def test_a_mapping_names_the_columns_of_several_plain_tables():
    files = [(f"{m}.csv", _csv(_model_log(m).rename(columns={"model": "system"}))) for m in ("a", "b")]
    mapping = {"system": "model", "question_id": "example_id", "is_correct": "correct", "task": None}
    table = read_and_validate(files, mapping)
    assert table.frame is not None and sorted(table.frame["model"].unique()) == ["a", "b"]
    assert set(table.frame["task"]) == {"all"} and table.frame["correct"].sum() == 4


def test_combined_tables_can_be_remapped_by_their_role_named_columns():
    frame = load_eval_logs([("a.csv", _csv(_model_log("a"))), ("b.csv", _csv(_model_log("b")))],
                           mapping={"model": "model", "example_id": "example_id", "correct": "score", "task": "task"})
    assert "score" in frame and "correct" not in frame


def test_a_zip_listing_too_many_files_is_refused_before_its_directory_is_read():
    data = _zip({f"f{i}.csv": b"" for i in range(12)})
    with pytest.raises(EvalDataError, match="holds 12 files; evalcore reads at most 10"):
        open_zip(data, "many.zip", max_members=10)


def test_row_limit_applies_to_imported_logs():
    with pytest.raises(EvalDataError, match="at most 5 rows.*EVALCORE_MAX_ROWS"):
        load_eval_logs([("a.csv", _csv(_model_log("a"))), ("b.csv", _csv(_model_log("b")))],
                       limits=ReadLimits(max_rows=5))
