"""The Subgroups page's feature defaults on real uploads (ImageNet-X) and automatic subgroups, through AppTest."""

from __future__ import annotations

import pandas as pd
import pytest

from test_pages import goto, open_app, table_with, texts, upload

SET_ASIDE = {"label", "predicted_class", "metaclass_id", "correct_real"}


@pytest.fixture(scope="module")
def imagenet_x(shared_file) -> bytes:
    return shared_file("imagenet_x_predictions.csv.gz").read_bytes()


def upload_without_group(at, imagenet_x: bytes):
    """ImageNet-X with its suggested group (metaclass_name, issue 37) set to none on the Data page: one group."""
    upload(at, "imagenet_x_predictions.csv.gz", imagenet_x, "application/gzip")
    assert at.selectbox(key="role_group").value == "metaclass_name"
    at.selectbox(key="role_group").set_value("(not in the file)").run()
    assert not at.exception and not texts(at.error)
    assert at.selectbox(key="role_group").value == "(not in the file)"
    return at


def test_imagenet_x_subgroups_render_with_sensible_default_features(imagenet_x):
    at = upload_without_group(open_app(), imagenet_x)
    notes = [n for n in texts(at.info) if n.startswith("Columns set aside as features by default")]
    assert len(notes) == 1
    for column in SET_ASIDE:
        assert f"{column} (" in notes[0]
    assert "correct_real (label-derived" in notes[0] and "label (identifier-like" in notes[0]

    goto(at, "subgroups")  # the group left out, the single group "all": no EB forest plot, the automatic-subgroups offer instead
    assert not at.exception and not texts(at.error) and not texts(at.warning)
    [single] = [n for n in texts(at.info) if n.startswith("The selection has a single group")]
    assert "tick 'Form subgroups automatically' to form subgroups" in single
    assert not at.get("plotly_chart")
    chosen = at.multiselect(key="sg_features")
    assert SET_ASIDE.isdisjoint(chosen.value)
    assert SET_ASIDE <= set(chosen.options)  # still there to choose
    table = table_with(at, "model", "group", "n", "estimate", "ci_low", "ci_high")
    assert table["model"].nunique() == 4 and (table["group"] == "all").all()  # no group column, no default feature


def test_automatic_subgroups_on_a_feature_with_missing_values(imagenet_x):
    """correct_real has no value on 6% of the images: chosen by hand, automatic subgroups still form."""
    at = upload_without_group(open_app(), imagenet_x)
    goto(at, "subgroups")
    at.selectbox(key="sg_reg").set_value("mean")
    at.multiselect(key="sg_features").set_value(["correct_real"])
    at.checkbox(key="sg_auto").check()
    at.run()
    assert not at.exception and not texts(at.error)
    table = table_with(at, "model", "group", "eb", "eb_low", "eb_high")
    # the four models are scored on the same images: no other model's labels are free of a unit's own noise
    assert any(c.startswith("Group difficulty") and "off: every model is scored on the same examples" in c
               for c in texts(at.caption))
    assert any(c.startswith("Measured on held-out MMLU-Pro") and "most accurate fifth" in c for c in texts(at.caption))
    assert table["group"].str.startswith("cluster ").all()
    assert table.groupby("model")["group"].nunique().min() >= 2
    assert pd.Series(table["eb_low"] <= table["eb_high"]).all()
