"""comparison_sentence (issue 48): the one sentence the Label, Compare and report pages and ``evalcore label status``
give a comparison campaign's answer in, for each state of the estimate (built by hand: the words, not the
statistics, are under test here)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd

from evalcore.labeling.comparison import comparison_sentence, pairs_table
from evalcore.labeling.difference import ComparisonEstimate

PAIRS = pd.DataFrame([{"model_a": "ViT", "model_b": "DINO", "difference": 0.013, "ci_low": 0.006, "ci_high": 0.02,
                       "cs_low": 0.004, "cs_high": 0.022, "se": 0.003}])


def _info(decide=True, target=0.02, budget=None, M=5000):
    return SimpleNamespace(decide=decide, target=target, budget=budget, pool={"M": M})


def _estimate(difference=0.013, low=0.004, high=0.022, labels=412, skipped=0, stop=True, decided="ViT",
              interval="confidence sequence", random=1900.0, design="disagreement", margin=0.0, equivalent=False,
              models=("ViT", "DINO"), needed=0, leader="ViT") -> ComparisonEstimate:
    return ComparisonEstimate(tuple(models), difference, low, high, labels, skipped, stop, decided, leader, PAIRS,
                              needed, random, interval, "", 0.95, design, 0.02, margin, equivalent)


def test_decided_as_the_issue_says_it():
    assert comparison_sentence(_info(), _estimate()) == (
        "ViT is better than DINO by 1.3 points (95% confidence sequence 0.4–2.2) — decided after 412 labels; a random "
        "paired sample would have needed about 1,900.")


def test_the_second_model_better_is_said_the_right_way_round():
    said = comparison_sentence(_info(), _estimate(-0.013, -0.022, -0.004, decided="DINO", leader="DINO"))
    assert said.startswith("DINO is better than ViT by 1.3 points (95% confidence sequence 0.4–2.2) — decided")


def test_a_margin_decides_not_worse_and_equivalence():
    not_worse = comparison_sentence(_info(), _estimate(0.003, -0.006, 0.012, margin=0.01))
    assert not_worse.startswith("ViT is not worse than DINO by more than 1 point: 0.3 points ahead (95% confidence "
                                "sequence -0.6 to +1.2) — decided after 412 labels")
    same = comparison_sentence(_info(), _estimate(0.001, -0.004, 0.006, decided=None, margin=0.01, equivalent=True))
    assert same == ("ViT and DINO are within ±1 point of each other: ViT − DINO = +0.1 points (95% confidence "
                    "sequence -0.4 to +0.6) — decided after 412 labels; a random paired sample would have needed "
                    "about 1,900.")


def test_not_decided_yet_says_what_stops_it_and_skips_are_said():
    said = comparison_sentence(_info(), _estimate(0.01, -0.02, 0.04, labels=80, skipped=2, stop=False, decided=None,
                                                  random=300.0))
    assert said == ("ViT − DINO: +1.0 points (95% confidence sequence -2.0 to +4.0): not decided yet, from 80 labels; "
                    "a random paired sample would have needed about 300. Label on: the campaign stops the moment the "
                    "confidence sequence excludes 0. 2 examples were skipped or judged differently (awaiting "
                    "adjudication): the interval counts each at its worst and at its best.")


def test_the_width_rule_and_the_budget():
    width = comparison_sentence(_info(decide=False), _estimate(interval="fixed-n interval", decided=None))
    assert width == ("ViT is better than DINO by 1.3 points (95% fixed-n interval 0.4–2.2), from 412 labels; a random "
                     "paired sample would have needed about 1,900. You can stop: the interval is within ±2 points.")
    more = comparison_sentence(_info(decide=False), _estimate(0.01, -0.01, 0.03, interval="fixed-n interval",
                                                              decided=None, stop=False, needed=120, labels=60))
    assert more.endswith("the interval includes 0, from 60 labels; a random paired sample would have needed about "
                         "1,900. About 120 more labels needed for ±2 points.")
    srs = comparison_sentence(_info(decide=False, target=None, budget=60),
                              _estimate(interval="fixed-n interval", decided=None, labels=60, design="srs"))
    assert srs.endswith("from 60 labels. The budget of 60 labels is used.")  # srs is the random paired sample


def test_several_models_and_no_estimate_yet():
    leader = comparison_sentence(_info(), _estimate(models=("ViT", "DINO", "CLIP")))
    assert leader == ("ViT is better than every other model (DINO, CLIP; each pair's 95% confidence sequence, all "
                      "at once) — decided after 412 labels.")
    nothing = comparison_sentence(_info(), _estimate(math.nan, math.nan, math.nan, labels=1, stop=False,
                                                     decided=None, random=math.nan))
    assert nothing == ("ViT vs DINO: 1 label so far; the first estimate of the difference needs 2 labels, and the "
                       "stop rule at least 30.")


def test_the_pairs_table_shows_the_sequence_only_where_it_is_the_interval():
    assert list(pairs_table(_estimate()).columns) == ["model_a", "model_b", "difference", "ci_low", "ci_high",
                                                      "sequence_low", "sequence_high"]
    assert "sequence_low" not in pairs_table(_estimate(interval="fixed-n interval"))
