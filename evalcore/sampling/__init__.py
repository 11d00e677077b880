"""Labeling-budget designs: strata (:mod:`.kmeans1d`), allocation, sampling, estimators and planning
(:mod:`.designs`), the labeling plan the page and the report state (:mod:`.plan`), proxies (:mod:`.proxy`),
uploaded labels (:mod:`.annotation`), charts (:mod:`.figures`).

The names below are imported on first use (PEP 562, :mod:`evalcore.lazy`): importing one submodule does not
import its siblings' libraries.
"""

from evalcore.lazy import exports

#: name -> the submodule that defines it
_EXPORTS = {"read_labels": "annotation", "Estimate": "designs", "DESIGNS": "designs", "ESTIMATORS": "designs",
            "kmeans_strata": "designs", "feature_strata": "designs", "group_strata": "designs",
            "stratum_spread": "designs", "stratum_variance": "designs", "allocate_budget": "designs",
            "draw_sample": "designs", "estimate": "designs", "predicted_mse": "designs",
            "design_efficiency": "designs", "labels_needed": "designs", "MIN_PILOT": "designs",
            "monte_carlo": "designs", "simulate_design": "designs", "recalibrated": "designs",
            "efficiency_range": "designs", "design_efficiency_of_log": "designs", "KMeans1D": "kmeans1d",
            "kmeans_1d": "kmeans1d", "kmeans_1d_binned": "kmeans1d", "METRICS": "proxy", "CalibratedProxy": "proxy",
            "expected_metric": "proxy", "metric_range": "proxy", "check_proxy": "proxy",
            "calibrate_crossfit": "proxy", "PlattFit": "proxy", "platt_fit": "proxy", "LabelingPlan": "plan",
            "labeling_plan": "plan"}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
