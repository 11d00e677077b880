"""Benchmark leaderboards with honest uncertainty: bootstrap scores, differences and ranks (:mod:`.bootstrap`,
:mod:`.ranks`), the Bayesian model (:mod:`.bayes`, diagnostics in :mod:`.mcmc`), task weighting and the ternary
map (:mod:`.weighting`), the paper's figures (:mod:`.publication`, :mod:`.figures`).
"""

from .bayes import (DEFAULT_RATE, GibbsDraws, gibbs, fit, bayes_leaderboard, posterior_rank_probabilities, split_rhat, effective_sample_size)
from .bootstrap import (Replicates, RANK_METHODS, bootstrap_replicates, bootstrap_summary, normalization_bounds, user_bounds, with_aggregates, long_board, leaderboard, rank_intervals, pairwise_differences, simultaneous_intervals)
from .mcmc import (RHAT_MAX, ESS_MIN, rank_rhat, ess_bulk, ess_tail, diagnose, convergence_problems)
from .ranks import (bonferroni_z, rank_with_ties, rank_bounds)
from .weighting import (SE_SOURCES, CategoryStats, DifferenceSE, category_table, weighted_scores, difference_se, correlation_factor, ternary_winner_map, simplex_grid)

__all__ = ['CategoryStats', 'DEFAULT_RATE', 'DifferenceSE', 'ESS_MIN', 'GibbsDraws', 'RANK_METHODS', 'RHAT_MAX', 'Replicates', 'SE_SOURCES', 'bayes_leaderboard', 'bonferroni_z', 'bootstrap_replicates', 'bootstrap_summary', 'category_table', 'convergence_problems', 'correlation_factor', 'diagnose', 'difference_se', 'effective_sample_size', 'ess_bulk', 'ess_tail', 'fit', 'gibbs', 'leaderboard', 'long_board', 'normalization_bounds', 'pairwise_differences', 'posterior_rank_probabilities', 'rank_bounds', 'rank_intervals', 'rank_rhat', 'rank_with_ties', 'simplex_grid', 'simultaneous_intervals', 'split_rhat', 'ternary_winner_map', 'user_bounds', 'weighted_scores', 'with_aggregates']
