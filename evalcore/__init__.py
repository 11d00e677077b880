"""evalcore: precise model evaluation when labels are scarce.

One subpackage per concern; each method's estimators, intervals and figures live together:

data         the edges of a log: reading files (within limits, in a bounded worker), mapping columns onto roles,
             validation into the canonical log, repeated samples, safe CSV export, names shown literally
importers    the logs of evaluation tools (Inspect AI, lm-evaluation-harness, HELM, promptfoo, OpenAI evals, ...)
engine       logs beyond memory: scan(source) -> LazyLog, reduced in DuckDB, Spark or any Ibis backend
stats        what every method shares: binomial intervals, per-cell means, the seeded parallel map, figure style
calibration  ECE with its interval, reliability tables and diagrams, selective prediction
subgroups    direct and empirical Bayes subgroup estimates, robust EB intervals, holdout study, forest plots
leaderboard  bootstrap leaderboards, ranks and differences, the Bayesian model, task weighting and ternary maps
sampling     labeling-budget designs: strata, allocation, estimators, planning, proxies
ppi          AI-assisted evaluation: prediction-powered means, Bradley-Terry, effective-sample-size curves
report       the stakeholder report: one self-contained HTML file of every method a log supports
workspace    saved datasets and analyses with owners and sharing, and who a signed-in account is
demo         the built-in demos
cli          the ``evalcore`` command (report, validate, workspace add, serve); ``python -m evalcore``

No module of this package imports streamlit.
"""

__version__ = "0.1.0"
