"""AI-assisted evaluation: prediction-powered means (:mod:`.means`), Bradley-Terry rankings (:mod:`.bradley_terry`),
effective-sample-size curves (:mod:`.curves`), the page's log matrices (:mod:`.autoeval`), charts (:mod:`.figures`).
"""

from .autoeval import (PPIData, log_matrices, estimate_table, quality_table, battle_sets, bradley_terry_table, moment_table)
from .bradley_terry import (ppi_bradley_terry, bradley_terry_of_log, pair_estimates)
from .curves import (default_grid, ess_curves, annotator_quality, bt_ess_curves)
from .means import (MeanEstimate, binary_floor, classical_mean, ppi_mean, stratified_ppi_mean, simultaneous_intervals, rank_models, chi2_statistic, projected_precision, labels_needed, ess_bootstrap, as_matrix, pooled_variance, tuned_lambda, ppi_variance, ppi_mean_by_model)

__all__ = ['MeanEstimate', 'PPIData', 'annotator_quality', 'as_matrix', 'battle_sets', 'binary_floor', 'bradley_terry_of_log', 'bradley_terry_table', 'bt_ess_curves', 'chi2_statistic', 'classical_mean', 'default_grid', 'ess_curves', 'ess_bootstrap', 'estimate_table', 'labels_needed', 'log_matrices', 'moment_table', 'pair_estimates', 'pooled_variance', 'ppi_bradley_terry', 'ppi_mean', 'ppi_mean_by_model', 'ppi_variance', 'projected_precision', 'quality_table', 'rank_models', 'simultaneous_intervals', 'stratified_ppi_mean', 'tuned_lambda']
