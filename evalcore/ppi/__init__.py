"""AI-assisted evaluation: prediction-powered means (:mod:`.means`), Bradley-Terry rankings (:mod:`.bradley_terry`),
effective-sample-size curves (:mod:`.curves`), the page's log matrices (:mod:`.autoeval`), charts (:mod:`.figures`).

The names below are imported on first use (PEP 562, :mod:`evalcore.lazy`): importing one submodule does not
import its siblings' libraries.
"""

from evalcore.lazy import exports

#: name -> the submodule that defines it
_EXPORTS = {"PPIData": "autoeval", "log_matrices": "autoeval", "estimate_table": "autoeval",
            "quality_table": "autoeval", "battle_sets": "autoeval", "bradley_terry_table": "autoeval",
            "moment_table": "autoeval", "ppi_bradley_terry": "bradley_terry",
            "bradley_terry_of_log": "bradley_terry", "pair_estimates": "bradley_terry", "default_grid": "curves",
            "ess_curves": "curves", "annotator_quality": "curves", "bt_ess_curves": "curves",
            "MeanEstimate": "means", "binary_floor": "means", "classical_mean": "means", "ppi_mean": "means",
            "stratified_ppi_mean": "means", "simultaneous_intervals": "means", "rank_models": "means",
            "chi2_statistic": "means", "projected_precision": "means", "labels_needed": "means",
            "ess_bootstrap": "means", "as_matrix": "means", "pooled_variance": "means", "tuned_lambda": "means",
            "ppi_variance": "means", "ppi_mean_by_model": "means"}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
