"""``evalcore label`` for comparison campaigns (issue 48), in subprocesses: ``create --models A B`` on a saved log of
outputs alone prints the id, the seed and the pool; the labels given (through the Python API, as the Label page
records them) come back in ``export`` with their inclusion probabilities and verdicts, in ``status`` as the one
sentence and as JSON equal to ``ComparisonCampaign.estimate()``, and in ``report`` as HTML with the same numbers;
hostile model names and outputs stay on one line in the terminal and neutralised in the CSV; refusals say what to
do."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from crafted import evalcore
from evalcore.labeling import Campaign
from evalcore.labeling.comparison import comparison_sentence
from evalcore.workspace import Workspace

N = 300
HOSTILE_MODEL = "evil\x1b[31m\nmodel"
HOSTILE_OUTPUT = "=HYPERLINK(\"http://x\")"


def _outputs(models=("vit", "dino"), seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """A log of class outputs only (A-D) and each example's right answer: the first model right 80% of the time,
    the second repeating the first's output on half the examples, otherwise right 55% of the time."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(list("ABCD"), N)
    first = np.where(rng.random(N) < 0.8, truth, rng.choice(list("ABCD"), N))
    second = np.where(rng.random(N) < 0.5, first, np.where(rng.random(N) < 0.55, truth, rng.choice(list("ABCD"), N)))
    ids = [f"q{i}" for i in range(N)]
    frame = pd.concat([pd.DataFrame({"model": m, "example_id": ids, "input": [f"Question {i}?" for i in range(N)],
                                     "output": out}) for m, out in zip(models, (first, second))], ignore_index=True)
    return frame, dict(zip(ids, truth))


def _saved(tmp_path, frame: pd.DataFrame) -> str:
    frame.to_csv(tmp_path / "outputs.csv", index=False)
    saved = evalcore("workspace", "add", "outputs.csv", "--name", "outputs", "--workspace", "ws", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    [dataset] = Workspace(tmp_path / "ws").datasets()
    return dataset.id


def _label(campaign, truth: dict, count: int, skip: int | None = None) -> None:
    """``count`` examples labeled through the API as the Label page does (the right answer once), the ``skip``-th
    skipped."""
    for k in range(count):
        example = campaign.next("carol")
        assert example is not None
        if k == skip:
            campaign.record(example, "carol", skipped=True)
        else:
            campaign.record(example, "carol", truth[example])


def test_create_label_status_export_report_agree(tmp_path):
    frame, truth = _outputs()
    dataset = _saved(tmp_path, frame)
    created = evalcore("label", "create", dataset, "--models", "vit", "dino", "--design", "disagreement", "--decide",
                       "--seed", "7", "--workspace", "ws", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    campaign_id = created.stdout.strip()
    campaign = Campaign.open(Workspace(tmp_path / "ws"), campaign_id)
    pool = campaign.info.pool
    assert campaign.info.models == ("vit", "dino") and campaign.info.decide and campaign.info.seed == 7
    assert "(--seed 7 draws this queue again)" in created.stderr
    assert (f"pool: {N} examples shared by vit, dino; their outputs differ on {pool['N_D']} "
            f"({pool['N_D'] / N:.0%}); the design draws from {pool['N_D']}") in created.stderr, created.stderr
    assert f"all agree {N - pool['N_D']}" in created.stderr

    _label(campaign, truth, 60, skip=4)
    status = evalcore("label", "status", campaign_id, "--json", "status.json", "--workspace", "ws", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    estimate = campaign.estimate()
    said = comparison_sentence(campaign.info, estimate)
    assert status.stdout.strip() == said
    numbers = json.loads((tmp_path / "status.json").read_text())
    for key in ("difference", "ci_low", "ci_high", "random_labels"):
        assert numbers[key] == pytest.approx(getattr(estimate, key), abs=1e-12), key
    assert (numbers["labels"], numbers["skipped"], numbers["stop"], numbers["decided"], numbers["leader"]) == \
        (estimate.labels, estimate.skipped, estimate.stop, estimate.decided, estimate.leader)
    assert numbers["labels"] == 59 and numbers["skipped"] == 1 and numbers["interval"] == "confidence sequence"
    assert numbers["sentence"] == said and numbers["campaign"] == campaign_id
    [pair] = numbers["pairs"]
    assert (pair["model_a"], pair["model_b"]) == ("vit", "dino")
    assert pair["cs_low"] == pytest.approx(estimate.ci_low) and pair["cs_high"] == pytest.approx(estimate.ci_high)
    # the estimate by hand: (N_D / N) times the mean difference of the labeled examples (the skip bounded)
    drawn = campaign.verdicts()
    known = drawn.dropna()
    assert numbers["difference"] == pytest.approx(pool["N_D"] / N * float((known["vit"] - known["dino"]).mean()))
    assert "1 example was skipped" in said

    exported = evalcore("label", "export", campaign_id, "-o", "queue.csv", "--workspace", "ws", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "59 settled, 1 awaiting adjudication" in exported.stderr
    table = pd.read_csv(tmp_path / "queue.csv", keep_default_na=False, na_values=[""])
    assert list(table.columns) == ["position", "example_id", "pattern", "inclusion_probability", "status",
                                   "output vit", "output dino", "correct vit", "correct dino", "answer", "annotator",
                                   "adjudicator"]
    assert (table["pattern"] == "vit ≠ dino").all()  # the disagreement design queues no all-agree example
    labeled = table[table["status"] == "labeled"].set_index("example_id")
    assert len(labeled) == 59 and (table["status"] == "skipped").sum() == 1
    assert np.allclose(labeled["inclusion_probability"], 60 / pool["N_D"])  # n / M: drawn over the population
    assert (labeled["correct vit"] == [int(frame.loc[(frame["model"] == "vit") & (frame["example_id"] == e),
                                                     "output"].iloc[0] == truth[e]) for e in labeled.index]).all()
    assert (labeled["answer"] == [truth[e] for e in labeled.index]).all() and (labeled["annotator"] == "carol").all()
    unlabeled = table[table["status"] == "unlabeled"]
    assert unlabeled["correct vit"].isna().all() and unlabeled["annotator"].isna().all()

    report = evalcore("label", "report", campaign_id, "-o", "campaign.html", "--workspace", "ws", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "campaign.html").read_text(encoding="utf-8")
    assert said.replace("'", "&#x27;") in html  # the sentence, as the terminal printed it
    assert f"{numbers['difference']:.3f}" in html and f"{pair['ci_low']:.3f} to {pair['ci_high']:.3f}" in html
    assert f"{pair['cs_low']:.3f}" in html and f"{pair['cs_high']:.3f}" in html
    embedded = json.loads(html.split('id="evalcore-numbers">')[1].split("</script>")[0])
    facts = embedded["sections"]["comparison_campaign"]["facts"]
    for key in ("difference", "ci_low", "ci_high", "labels", "skipped", "stop", "decided", "random_labels"):
        assert facts[key] == pytest.approx(numbers[key]) if isinstance(numbers[key], float) else \
            facts[key] == numbers[key], key
    patterns = {r["pattern"]: r for r in embedded["sections"]["comparison_campaign"]["tables"][
        "labels per agreement pattern"]}
    assert patterns["all agree"] == {"pattern": "all agree", "examples": N - pool["N_D"], "sampled": False,
                                     "labels": 0}
    assert patterns["vit ≠ dino"]["labels"] == 60
    assert "confidence sequence" in html and "at most 5%" in html  # what the interval means


def test_labels_from_a_file_the_budget_sentence_and_the_srs_baseline(tmp_path):
    """srs with a budget of 40: 10 labels through the API, the other 30 from the exported file filled in (20 by the
    right answer, 10 by verdicts per model); a file with a verdict off the scale is refused naming its line, and
    nothing of it is kept."""
    frame, truth = _outputs()
    dataset = _saved(tmp_path, frame)
    created = evalcore("label", "create", dataset, "--models", "vit", "dino", "--design", "srs", "--budget", "40",
                       "--workspace", "ws", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    campaign = Campaign.open(Workspace(tmp_path / "ws"), created.stdout.strip())
    assert f"the design draws from {N}" in created.stderr
    before = evalcore("label", "status", campaign.id, "--json", "s.json", "--workspace", "ws", cwd=tmp_path)
    assert before.stdout.strip() == "vit vs dino: 0 labels so far; the first estimate of the difference needs 2 " \
                                    "labels, and the stop rule at least 30."
    assert json.loads((tmp_path / "s.json").read_text())["difference"] is None  # NaN as null
    _label(campaign, truth, 10)
    exported = evalcore("label", "export", campaign.id, "-o", "q.csv", "--workspace", "ws", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    table = pd.read_csv(tmp_path / "q.csv", keep_default_na=False, na_values=[""])
    assert len(table) == 40 and "all agree" in set(table["pattern"])  # srs samples the whole pool
    assert np.allclose(table.loc[table["status"] == "labeled", "inclusion_probability"], 10 / N)
    assert np.allclose(table.loc[table["status"] == "unlabeled", "inclusion_probability"], 40 / N)
    todo = table.index[table["status"] == "unlabeled"]
    by_answer, by_verdicts = todo[:20], todo[20:]
    table.loc[by_answer, "answer"] = [truth[e] for e in table.loc[by_answer, "example_id"]]
    for model in ("vit", "dino"):
        table.loc[by_verdicts, f"correct {model}"] = (table.loc[by_verdicts, f"output {model}"] ==
                                                      table.loc[by_verdicts, "example_id"].map(truth)).astype(int)
    table.loc[by_verdicts, "annotator"] = "dave"
    bad = table.copy()
    bad.loc[by_verdicts[3], "correct vit"] = 5
    bad.to_csv(tmp_path / "bad.csv", index=False)
    refused = evalcore("label", "import", campaign.id, "bad.csv", "--workspace", "ws", cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert f"line {by_verdicts[3] + 2}: The verdict 5.0 is not 1 (right) or 0 (wrong)" in refused.stderr
    assert "nothing was recorded" in refused.stderr and campaign.estimate().labels == 10
    table.to_csv(tmp_path / "filled.csv", index=False)
    imported = evalcore("label", "import", campaign.id, "filled.csv", "--workspace", "ws", cwd=tmp_path)
    assert imported.returncode == 0 and "recorded 30 labels" in imported.stderr, imported.stderr
    status = evalcore("label", "status", campaign.id, "--json", "s.json", "--workspace", "ws", cwd=tmp_path)
    assert status.returncode == 0 and status.stdout.strip().endswith("The budget of 40 labels is used.")
    assert "random paired sample" not in status.stdout  # srs is the random paired sample
    numbers = json.loads((tmp_path / "s.json").read_text())
    drawn = campaign.verdicts()
    assert numbers["labels"] == 40 and numbers["stop"] is True
    assert numbers["difference"] == pytest.approx(float((drawn["vit"] - drawn["dino"]).mean()))  # the sample mean
    assert set(campaign.history()["annotator"]) == {"carol", "import", "dave"}


def test_hostile_names_stay_on_one_line_and_refusals_say_what_to_do(tmp_path):
    frame, _ = _outputs(models=(HOSTILE_MODEL, "plain"))
    frame.loc[frame["example_id"] == "q1", "output"] = HOSTILE_OUTPUT
    dataset = _saved(tmp_path, frame)
    [model] = [m for m in Workspace(tmp_path / "ws").dataset(dataset)["model"].unique() if m != "plain"]
    created = evalcore("label", "create", dataset, "--models", model, "plain", "--design", "srs", "--budget", "30",
                       "--workspace", "ws", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert "\x1b" not in created.stderr and created.stderr.count("\n") == 3
    status = evalcore("label", "status", created.stdout.strip(), "--workspace", "ws", cwd=tmp_path)
    assert status.returncode == 0 and status.stdout.count("\n") == 1 and "\x1b" not in status.stdout
    exported = evalcore("label", "export", created.stdout.strip(), "-o", "q.csv", "--workspace", "ws", cwd=tmp_path)
    assert exported.returncode == 0
    text = (tmp_path / "q.csv").read_text(encoding="utf-8")
    assert "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text  # neutralised: a spreadsheet runs no formula

    def refused(*args: str) -> str:
        done = evalcore("label", "create", dataset, *args, "--workspace", "ws", cwd=tmp_path)
        assert done.returncode in (1, 2) and done.stderr.strip().count("\n") <= 1 + 20 * (done.returncode == 2)
        return done.stderr

    assert "A comparison's design must be one of srs, disagreement, neyman; got 'active'" in refused(
        "--models", "plain", model, "--design", "active")
    assert "reads each model's confidence in its output ('confidence' column)" in refused(  # outputs alone
        "--models", "plain", model, "--design", "neyman")
    assert "add --decide, or drop --margin" in refused("--models", "plain", model, "--design", "srs", "--margin",
                                                       "0.01")
    assert "give --models A B" in refused("--model", "plain", "--design", "srs", "--decide")
    assert "drop --metric and --scale" in refused("--models", "plain", model, "--design", "srs", "--metric", "score")
    no_model = refused("--models", "plain", "nobody", "--design", "srs")
    assert "The dataset has no model nobody; its models are evil\\x1b[31m model, plain." in no_model
    assert "not allowed with argument" in refused("--models", "plain", model, "--design", "srs", "--decide",
                                                  "--budget", "40")
