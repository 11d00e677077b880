"""Numbers by kind and the lead sentence (evalcore.stats.headline); the glossary's lines (evalcore.stats.glossary)."""

import math

import pandas as pd
import pytest

from evalcore.stats import glossary, headline


@pytest.mark.parametrize("value, text", [(0.716, "0.716"), (0.7, "0.700"), (0.0312, "0.0312"), (12.345, "12.3"),
                                         (1.0, "1.00"), (0.99951, "1.00"), (-0.0123, "-0.0123"), (1234.5, "1,234"),
                                         (math.nan, "n/a"), (None, "n/a")])
def test_estimates_have_three_significant_digits(value, text):
    assert headline.number(value) == text


def test_counts_are_integers_and_intervals_follow_their_estimate():
    assert headline.count(3480.0) == "3,480" and headline.count(37) == "37"
    assert headline.interval(0.716, 0.70852, 0.7248) == "0.716 (0.709\u20130.725)"


def test_the_lead_sentence_names_the_leader_and_counts_the_models_within_its_interval():
    table = pd.DataFrame({"model": ["a", "b", "c"], "estimate": [0.70, 0.716, 0.60],
                          "ci_low": [0.68, 0.69, 0.58], "ci_high": [0.72, 0.725, 0.62]})
    assert headline.lead_sentence(table, 0.95) == (
        "b leads on accuracy at 0.716 (95% interval 0.690\u20130.725); 1 other model is within its interval.")
    assert headline.lead_sentence(table.iloc[[2]], 0.9, "win rate") == (
        "c: win rate 0.600 (90% interval 0.580\u20130.620).")
    assert headline.lead_sentence(table, 0.95, "ECE", higher_is_better=False).startswith("c is lowest on ECE at 0.600")
    assert headline.lead_sentence(table.iloc[:0], 0.95) == "No accuracy can be estimated from the selection."


def test_every_term_has_one_line_and_an_unknown_term_is_refused():
    assert all(line.endswith(".") and "\n" not in line for line in glossary.TERMS.values())
    assert glossary.explain("ESS").startswith("Effective sample size")
    with pytest.raises(KeyError):
        glossary.explain("no such term")


def test_beside_overall_names_the_pooled_number_and_gives_the_overall_one():
    overall = pd.DataFrame({"model": ["atlas-l", "solo"], "n_tasks": [9, 1], "estimate": [0.7881, 0.6],
                            "ci_low": [0.7712, 0.5], "ci_high": [0.80449, 0.7]})
    assert headline.beside_overall("atlas-l", "pooled over its 8,700 examples", overall, 0.95) == (
        "This accuracy is pooled over its 8,700 examples; atlas-l's overall accuracy (Models, Leaderboard, report) "
        "is the mean over 9 tasks, 0.788 (0.771\u20130.804) at 95%.")
    assert headline.beside_overall("solo", "pooled", overall, 0.95) == ""  # one task: the same estimand
    assert headline.beside_overall("absent", "pooled", overall, 0.95) == ""
