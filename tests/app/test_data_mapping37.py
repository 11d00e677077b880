"""The Data page's column mapping and opening sentence on real logs (issue 37, point 4): ImageNet-X's
metaclass_name (100 values) suggested as the group and shown so in the mapping; MMLU-Pro's 14 categories (its
tasks are its categories: no task column) called categories."""

from __future__ import annotations

from test_pages import open_app, shown, texts, upload


def test_imagenet_x_shows_metaclass_name_as_the_suggested_group(shared_file):
    at = upload(open_app(), "imagenet_x_predictions.csv.gz",
                shared_file("imagenet_x_predictions.csv.gz").read_bytes(), "application/gzip")
    assert at.selectbox(key="role_group").value == "metaclass_name"
    assert any(n.startswith("No group column: 'metaclass_name' (100 values) is the group") for n in texts(at.info))
    assert shown(at.main.subheader[0].value).startswith("imagenet_x_predictions.csv.gz: 4 models, 1 task, 50,000 "
                                                        "examples")


def test_mmlu_pro_counts_its_categories_as_categories(shared_file):
    at = upload(open_app(), "mmlu_pro_per_question.csv.gz",
                shared_file("mmlu_pro_per_question.csv.gz").read_bytes(), "application/gzip")
    sentence = shown(at.main.subheader[0].value)
    assert "14 categories" in sentence and "tasks" not in sentence, sentence
    assert at.selectbox(key="role_group").value == "src"
