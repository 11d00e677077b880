"""Subgroup accuracies that borrow strength: direct and empirical Bayes estimates (:mod:`.estimates`) with
robust EB intervals (:mod:`.robust_intervals`), per-subgroup summaries (:mod:`.area`), the holdout study (:mod:`.holdout`),
automatic subgroups (:mod:`.clustering`), forest and shrinkage plots (:mod:`.figures`).
"""

from .area import (suggest_roles, AreaSummary, area_summary, AreaEstimates, area_estimates)
from .clustering import auto_groups
from .estimates import (direct_estimates, unit_variances, unit_features, empirical_bayes, group_difficulty_default, group_difficulty_feature, finite_population, fit_summary)
from .holdout import (HoldoutResult, sample_sizes, holdout_study, summarize)
from .robust_intervals import (robust_critical_value, EBCIResult, ebci)

__all__ = ['AreaEstimates', 'AreaSummary', 'EBCIResult', 'HoldoutResult', 'area_estimates', 'area_summary', 'auto_groups', 'direct_estimates', 'ebci', 'empirical_bayes', 'finite_population', 'fit_summary', 'group_difficulty_default', 'group_difficulty_feature', 'holdout_study', 'robust_critical_value', 'sample_sizes', 'suggest_roles', 'summarize', 'unit_features', 'unit_variances']
