"""The Label page shows the example as annotators need it (issue 47, item 4): the image a log's image column names
(from EVALCORE_MEDIA_DIR or the zip of images saved with the dataset), a refused one as one line naming the file;
the question with its lettered options, the model's choice and the reference marked; and, only for a log with no
question, options or image, what column to add."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace
from test_pages import assert_no_exception, open_page, texts

N = 40


def _png(i: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64 + i, 48), (i * 5 % 256, 90, 200)).save(out, format="PNG")
    return out.getvalue()


def _log(**columns) -> bytes:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)],
                          "confidence": rng.uniform(0.3, 0.99, N).round(3), "correct": np.nan, **columns})
    return frame.to_csv(index=False).encode()


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def _opened(folder, log: bytes):
    """The Label page on a new campaign of ``log``, with alice's first example; (page, that example's number)."""
    ws = Workspace(folder)
    campaign = Campaign.create(ws, ws.add_dataset(log, "log").id, "m", "srs", budget=10, seed=1)
    at = open_page("label", campaign=campaign.id)
    at.text_input(key="label_annotator").set_value("alice")
    at.run()
    assert_no_exception(at)
    return at, int(campaign.next("alice")[1:]), campaign


def _images(at) -> list:
    return at.get("image")


def test_the_image_of_an_image_log_is_shown_from_the_media_folder(folder, tmp_path, monkeypatch):
    media = tmp_path / "media"
    (media / "val").mkdir(parents=True)
    for i in range(N):
        (media / "val" / f"{i}.png").write_bytes(_png(i))
    monkeypatch.setenv("EVALCORE_MEDIA_DIR", str(media))
    at, i, _ = _opened(folder, _log(image=[f"val/{i}.png" for i in range(N)]))
    assert len(_images(at)) == 1
    assert any(f"val/{i}.png (PNG, {64 + i} x 48 pixels)" in c for c in texts(at.caption))
    assert not any("keeps no question" in t for t in texts(at.info))
    at.button(key="label_correct").click()
    at.run()
    assert_no_exception(at)
    assert len(_images(at)) == 1  # the next example's image


def test_a_refused_image_is_one_line_naming_the_file(folder, tmp_path, monkeypatch):
    media = tmp_path / "media"
    media.mkdir()
    (tmp_path / "secret.png").write_bytes(_png(0))
    monkeypatch.setenv("EVALCORE_MEDIA_DIR", str(media))
    at, i, _ = _opened(folder, _log(image=["../secret.png"] * N))
    assert not _images(at)
    [warning] = texts(at.warning)
    assert "'../secret.png'" in warning and "'..' is refused" in warning


def test_the_zip_of_images_saved_with_the_dataset_is_shown(folder, monkeypatch):
    monkeypatch.delenv("EVALCORE_MEDIA_DIR", raising=False)
    names = [f"ILSVRC2012_val_{i:08d}.JPEG" for i in range(N)]  # no image column: the ids name the files
    ws = Workspace(folder)
    frame = pd.read_csv(io.BytesIO(_log()))
    record = ws.add_dataset(frame.assign(example_id=names).to_csv(index=False).encode(), "imagenet")
    campaign = Campaign.create(ws, record.id, "m", "srs", budget=10, seed=1)
    at = open_page("label", campaign=campaign.id)
    at.text_input(key="label_annotator").set_value("alice")
    at.run()
    assert not _images(at)  # nowhere to look yet: the page says what to add
    assert any("keeps no question, options or image" in t and "'image'" in t for t in texts(at.info))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for i, name in enumerate(names):
            jpeg = io.BytesIO()
            Image.new("RGB", (32, 32), (i, 0, 0)).save(jpeg, format="JPEG")
            archive.writestr(f"val/{name}", jpeg.getvalue())
    ws.add_media(record.id, out.getvalue())
    at.run()
    assert_no_exception(at)
    assert len(_images(at)) == 1
    assert not any("keeps no question" in t for t in texts(at.info))


def test_a_question_with_options_shows_them_lettered_with_the_models_choice(folder):
    options = {letter: [f"{letter.lower()}{i}" for i in range(N)] for letter in "ABCD"}
    log = _log(question=[f"Which is **{i}**?" for i in range(N)], **options,
               answer=["C"] * N, pred=["B"] * N)
    at, i, _ = _opened(folder, log)
    shown_text = [t.value for t in at.text]
    assert f"Which is **{i}**?" in shown_text  # literally
    assert f"A. a{i}\nB. b{i}    ◀ the model's answer\nC. c{i}    ✓ reference\nD. d{i}" in shown_text
    assert not any("keeps no question" in t for t in texts(at.info))


def test_a_log_with_no_question_says_what_column_to_add(folder):
    at, _, _ = _opened(folder, _log(answer=["C"] * N))  # MMLU-Pro's per-question file: the letter only
    [info] = [t for t in texts(at.info) if "keeps no question" in t]
    assert "'input'" in info and "'options'" in info and "'image'" in info and "EVALCORE_MEDIA_DIR" in info
    assert "C" in [t.value for t in at.text]  # the reference it does keep
