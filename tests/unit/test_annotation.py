"""evalcore.sampling.annotation: annotators' labels checked against the examples a design selected."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.sampling.annotation import read_labels
from evalcore.data.reading import EvalDataError, read_table

SELECTED = ["img-1", "img-2", "img-3", "17"]


def test_labels_for_selected_examples_are_read_as_floats():
    table = read_table(b"example_id,correct\nimg-1,1\nimg-3,0\n17,true\nimg-2,\n")
    labels = read_labels(table, SELECTED)
    assert labels.to_dict() == {"img-1": 1.0, "img-3": 0.0, "17": 1.0}  # the empty label is not labeled yet
    assert labels.index.name == "example_id"


def test_other_column_names_are_recognised():
    labels = read_labels(pd.DataFrame({"ID": ["img-2"], "Label": ["No"]}), SELECTED)
    assert labels.to_dict() == {"img-2": 0.0}


def test_ids_not_selected_are_refused_with_their_list():
    table = pd.DataFrame({"example_id": ["img-1", "img-9", "img-8"], "correct": [1, 0, 1]})
    with pytest.raises(EvalDataError, match=r"2 id\(s\) .* not selected for labeling: 'img-8', 'img-9'"):
        read_labels(table, SELECTED)


def test_repeated_ids_and_bad_labels_are_refused():
    with pytest.raises(EvalDataError, match="'img-1' appear more than once"):
        read_labels(pd.DataFrame({"example_id": ["img-1", "img-1"], "correct": [1, 1]}), SELECTED)
    with pytest.raises(EvalDataError, match=r"must hold 0 or 1.*line\(s\) \[3\].*'maybe'"):
        read_labels(pd.DataFrame({"example_id": ["img-1", "img-2"], "correct": ["1", "maybe"]}), SELECTED)
    with pytest.raises(EvalDataError, match="no label column"):
        read_labels(pd.DataFrame({"example_id": ["img-1"], "score": [1]}), SELECTED)
    with pytest.raises(EvalDataError, match="no example id column"):
        read_labels(pd.DataFrame({"name": ["img-1"], "correct": [1]}), SELECTED)
