"""Subgroup accuracies that borrow strength: direct and empirical Bayes estimates (:mod:`.estimates`) with
robust EB intervals (:mod:`.robust_intervals`), per-subgroup summaries (:mod:`.area`), the holdout study (:mod:`.holdout`),
automatic subgroups (:mod:`.clustering`), forest and shrinkage plots (:mod:`.figures`).

The names below are imported on first use (PEP 562, :mod:`evalcore.lazy`): importing one submodule does not
import its siblings' libraries.
"""

from evalcore.lazy import exports

#: name -> the submodule that defines it
_EXPORTS = {"suggest_roles": "area", "AreaSummary": "area", "area_summary": "area", "AreaEstimates": "area",
            "area_estimates": "area", "auto_groups": "clustering", "direct_estimates": "estimates",
            "unit_variances": "estimates", "unit_features": "estimates", "empirical_bayes": "estimates",
            "group_difficulty_default": "estimates", "group_difficulty_feature": "estimates",
            "finite_population": "estimates", "fit_summary": "estimates", "HoldoutResult": "holdout",
            "sample_sizes": "holdout", "holdout_study": "holdout", "summarize": "holdout",
            "robust_critical_value": "robust_intervals", "EBCIResult": "robust_intervals", "ebci": "robust_intervals"}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
