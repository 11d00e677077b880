"""Labeling-budget designs: strata (:mod:`.kmeans1d`), allocation, sampling, estimators and planning
(:mod:`.designs`), proxies (:mod:`.proxy`), uploaded labels (:mod:`.annotation`), charts (:mod:`.figures`).
"""

from .annotation import read_labels
from .designs import (Estimate, DESIGNS, ESTIMATORS, kmeans_strata, feature_strata, group_strata, stratum_spread, stratum_variance, allocate_budget, draw_sample, estimate, predicted_mse, design_efficiency, labels_needed, MIN_PILOT, monte_carlo, simulate_design, recalibrated, efficiency_range, design_efficiency_of_log)
from .kmeans1d import (KMeans1D, kmeans_1d, kmeans_1d_binned)
from .proxy import (METRICS, CalibratedProxy, expected_metric, metric_range, check_proxy, calibrate_crossfit, PlattFit, platt_fit)

__all__ = ['CalibratedProxy', 'DESIGNS', 'ESTIMATORS', 'Estimate', 'KMeans1D', 'METRICS', 'MIN_PILOT', 'allocate_budget', 'calibrate_crossfit', 'check_proxy', 'design_efficiency', 'design_efficiency_of_log', 'draw_sample', 'efficiency_range', 'estimate', 'expected_metric', 'feature_strata', 'group_strata', 'kmeans_1d', 'kmeans_1d_binned', 'kmeans_strata', 'labels_needed', 'metric_range', 'monte_carlo', 'platt_fit', 'PlattFit', 'simulate_design', 'predicted_mse', 'read_labels', 'recalibrated', 'stratum_spread', 'stratum_variance']
