"""The words of the methods, each with one plain line, and the papers they come from, by name.

Pages show a method's name with its line as a tooltip (``help=``) and cite a paper by :data:`PAPERS`'s name
instead of "the paper"; the report and the CLI use the same lines. One place, so a term reads the same everywhere.
"""

from __future__ import annotations

#: the papers behind the methods, as a reader would cite them
PAPERS = {
    "leaderboard": "Longjohn et al. (2024), \u201cStatistical Uncertainty Quantification for Aggregate Performance "
                   "Metrics in Machine Learning Benchmarks\u201d",
    "subgroups": "Fogliato, Patil, Akpinar & Monfort (2024), \u201cPrecise Model Benchmarking with Only a Few "
                 "Observations\u201d",
    "sampling": "Fogliato, Patil, Monfort & Perona (2024), \u201cA Framework for Efficient Model Evaluation through "
                "Stratification, Sampling, and Estimation\u201d",
    "autoeval": "Boyeau, Angelopoulos, Yosef, Malik & Jordan (2024), \u201cAutoEval Done Right: Using Synthetic Data "
                "for Model Evaluation\u201d",
    "calibration": "Liang et al. (2022), \u201cHolistic Evaluation of Language Models\u201d (HELM)",
    "ebci": "Armstrong, Koles\u00e1r & Plagborg-M\u00f8ller (2022), \u201cRobust Empirical Bayes Confidence "
            "Intervals\u201d",
    "ppi++": "Angelopoulos, Duchi & Zrnic (2023), \u201cPPI++: Efficient Prediction-Powered Inference\u201d",
    "rhat": "Vehtari, Gelman, Simpson, Carpenter & B\u00fcrkner (2021), \u201cRank-Normalization, Folding, and "
            "Localization: An Improved R-hat\u201d",
    "newcombe": "Newcombe (1998), \u201cImproved Confidence Intervals for the Difference between Binomial "
                "Proportions Based on Paired Data\u201d",
    "mcnemar": "McNemar (1947), \u201cNote on the Sampling Error of the Difference between Correlated Proportions "
               "or Percentages\u201d",
    "benjamini-hochberg": "Benjamini & Hochberg (1995), \u201cControlling the False Discovery Rate: A Practical and "
                          "Powerful Approach to Multiple Testing\u201d",
}

#: each term of the pages with one line a newcomer can follow
TERMS = {
    "interval": "The range of values the data leave plausible: at a 95% level, 95 of 100 such intervals hold the "
                "true value.",
    "Wilson": "Wilson score interval for a proportion: stays inside 0\u20131 and holds its level with few examples.",
    "Student-t": "Interval for a mean score from its standard error and Student's t distribution.",
    "bootstrap": "Resampling the examples many times and recomputing the number, to see how much it moves.",
    "minimum detectable difference": "The smallest true change the comparison would detect 80% of the time at "
                                     "the chosen level, given its shared examples and how often the two runs "
                                     "disagree, by the exact power of the test it runs (exact McNemar for 0/1, "
                                     "the paired t for scores); a smaller change may be there unseen.",
    "simultaneous": "Intervals that hold all at once at the level (max-|t| bootstrap), so reading many of them "
                    "together stays honest.",
    "83.4%": "83.4% comparison intervals: two such intervals that do not overlap differ at about the 5% level "
             "(Goldstein & Healy 1995).",
    "rank interval": "The best and worst place a model can hold given the uncertainty (Mogstad et al. 2024).",
    "direct": "Direct estimate (DT): the subgroup's own accuracy, from its examples alone.",
    "synthetic": "Synthetic estimate (SR): the accuracy predicted for the subgroup from what is known about it "
                 "(e.g. the model's overall accuracy), ignoring its own examples.",
    "empirical Bayes": "Empirical Bayes (EB): a weighted mean of the direct and synthetic estimates; small "
                       "subgroups borrow more from the prediction (Fogliato et al. 2024).",
    "EBCI": "Robust empirical Bayes confidence interval: an EB interval that keeps its level on average over "
            "subgroups whatever their true accuracies (Armstrong, Koles\u00e1r & Plagborg-M\u00f8ller 2022).",
    "shrinkage": "How far an EB estimate moves from the subgroup's own accuracy toward the prediction (0 = not at "
                 "all, 1 = all the way).",
    "SRS": "Simple random sampling: every example equally likely to be labeled.",
    "stratified": "Stratified sampling: examples split into strata (e.g. by the model's confidence) and labeled "
                  "in each, which makes the estimate more precise (Fogliato et al. 2024).",
    "Neyman": "Neyman allocation: more labels where answers vary more, the allocation with the smallest error.",
    "proportional": "Proportional allocation: labels shared in proportion to the strata's sizes.",
    "Horvitz-Thompson": "Horvitz-Thompson estimator: each labeled example weighted by one over its chance of being "
                        "picked, which keeps the estimate unbiased.",
    "proxy": "A stand-in for the unknown label (e.g. the model's confidence) used to plan where to label.",
    "PPI": "Prediction-powered inference: a few human labels correct an AI judge's many verdicts, so the estimate "
           "is unbiased and tighter than from the labels alone (Boyeau et al. 2024).",
    "PPI++": "PPI with a tuned weight on the AI judge (lambda): never worse than the labels alone (Angelopoulos, "
             "Duchi & Zrnic 2023).",
    "lambda": "How much the AI judge's verdicts are trusted (0 = ignored, 1 = fully).",
    "ESS": "Effective sample size: how many human labels alone would give the same precision.",
    "Bradley-Terry": "A model of pairwise battles in which each model has a strength; the chance A beats B grows "
                     "with the difference of their strengths.",
    "ECE": "Expected calibration error: the average gap between the model's confidence and its accuracy, over "
           "confidence bins (0 = perfectly calibrated).",
    "reliability diagram": "Accuracy against confidence per bin: a calibrated model lies on the diagonal.",
    "selective prediction": "Answering only when the confidence is high enough: accuracy on the answered share.",
    "AURC": "Area under the risk-coverage curve: the mean error over all shares answered (lower is better).",
    "R-hat": "Convergence check of the sampler: close to 1 (below 1.01) means the chains agree (Vehtari et al. "
             "2021).",
    "posterior": "What the Bayesian model believes about a number after seeing the data.",
    "paired difference": "The new run's score minus the base run's on each example both scored, averaged: the "
                         "same examples on both sides, so the difference is measured more precisely than from two "
                         "separate accuracies.",
    "McNemar test": "Exact test of whether two runs differ on a right/wrong metric, from the examples only one of "
                    "them got right (McNemar 1947); its interval is Newcombe's (1998) score interval.",
    "false discovery rate": "The expected share of false alarms among the slices flagged: at 10%, about 1 in 10 "
                            "flagged slices may differ by chance alone.",
    "Benjamini-Hochberg": "Benjamini-Hochberg q-values: p-values adjusted for the number of slices searched, so "
                          "that flagging every slice with q at or below the rate keeps the false discovery rate.",
}


def explain(term: str) -> str:
    """The line of ``term`` (KeyError for a term not in the glossary: a page must not show an unexplained word)."""
    return TERMS[term]
