"""Benchmark leaderboards with honest uncertainty: bootstrap scores, differences and ranks (:mod:`.bootstrap`,
:mod:`.ranks`), the Bayesian model (:mod:`.bayes`, diagnostics in :mod:`.mcmc`), task weighting and the ternary
map (:mod:`.weighting`), the paper's figures (:mod:`.publication`, :mod:`.figures`).

The names below are imported on first use (PEP 562, :mod:`evalcore.lazy`): importing one submodule does not
import its siblings' libraries.
"""

from evalcore.lazy import exports

#: name -> the submodule that defines it
_EXPORTS = {"DEFAULT_RATE": "bayes", "GibbsDraws": "bayes", "gibbs": "bayes", "fit": "bayes",
            "bayes_leaderboard": "bayes", "posterior_rank_probabilities": "bayes", "split_rhat": "bayes",
            "effective_sample_size": "bayes", "Replicates": "bootstrap", "RANK_METHODS": "bootstrap",
            "bootstrap_replicates": "bootstrap", "bootstrap_summary": "bootstrap",
            "normalization_bounds": "bootstrap", "user_bounds": "bootstrap", "with_aggregates": "bootstrap",
            "long_board": "bootstrap", "leaderboard": "bootstrap", "rank_intervals": "bootstrap",
            "pairwise_differences": "bootstrap", "simultaneous_intervals": "bootstrap", "RHAT_MAX": "mcmc",
            "ESS_MIN": "mcmc", "rank_rhat": "mcmc", "ess_bulk": "mcmc", "ess_tail": "mcmc", "diagnose": "mcmc",
            "convergence_problems": "mcmc", "bonferroni_z": "ranks", "rank_with_ties": "ranks",
            "rank_bounds": "ranks", "SE_SOURCES": "weighting", "CategoryStats": "weighting",
            "DifferenceSE": "weighting", "category_table": "weighting", "weighted_scores": "weighting",
            "difference_se": "weighting", "correlation_factor": "weighting", "ternary_winner_map": "weighting",
            "simplex_grid": "weighting"}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
