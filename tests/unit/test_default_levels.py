"""One level across the API (issue 26): every public function that returns an interval defaults to the package's
level, :data:`evalcore.stats.intervals.DEFAULT_LEVEL` (95%) — ``level=DEFAULT_LEVEL`` or ``alpha=1 - DEFAULT_LEVEL``.

The paper-specific levels (83.4% comparison intervals of the leaderboard papers' Tables 6, 7 and 9; ``alpha=0.1`` of
the AutoEval paper and ``ppi_py``) are options passed explicitly by their callers, never defaults.

``PUBLIC`` lists the functions by hand: a default that drifts fails ``test_public_defaults_are_the_one_level``; a new
public function with a numeric level/alpha default that is not listed fails ``test_every_level_default_is_listed``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from evalcore.stats.intervals import DEFAULT_ALPHA, DEFAULT_LEVEL

#: (module, function or Class.method, parameter): its default must be DEFAULT_LEVEL ("level") or DEFAULT_ALPHA
PUBLIC = [
    # leaderboards (the paper's 83.4% is passed explicitly: pages/leaderboard.py's comparison toggle, Tables 6/7/9)
    ("evalcore.leaderboard.bootstrap", "leaderboard", "level"),
    ("evalcore.leaderboard.bootstrap", "rank_intervals", "level"),
    ("evalcore.leaderboard.bootstrap", "pairwise_differences", "level"),
    ("evalcore.leaderboard.bayes", "bayes_leaderboard", "level"),
    ("evalcore.leaderboard.weighting", "weighted_scores", "level"),
    # prediction-powered inference (alpha 0.1 of the paper and ppi_py is passed explicitly)
    ("evalcore.ppi.means", "classical_mean", "alpha"),
    ("evalcore.ppi.means", "ppi_mean", "alpha"),
    ("evalcore.ppi.means", "ppi_mean_by_model", "alpha"),
    ("evalcore.ppi.means", "stratified_ppi_mean", "alpha"),
    ("evalcore.ppi.means", "projected_precision", "alpha"),
    ("evalcore.ppi.means", "labels_needed", "alpha"),
    ("evalcore.ppi.means", "ess_bootstrap", "level"),
    ("evalcore.ppi.autoeval", "estimate_table", "alpha"),
    ("evalcore.ppi.autoeval", "quality_table", "alpha"),
    ("evalcore.ppi.autoeval", "bradley_terry_table", "alpha"),
    ("evalcore.ppi.autoeval", "moment_table", "alpha"),
    ("evalcore.ppi.bradley_terry", "ppi_bradley_terry", "alpha"),
    ("evalcore.ppi.bradley_terry", "bradley_terry_of_log", "alpha"),
    ("evalcore.ppi.bradley_terry", "judge_bradley_terry", "alpha"),
    ("evalcore.ppi.curves", "ess_curves", "alpha"),
    ("evalcore.ppi.curves", "annotator_quality", "alpha"),
    ("evalcore.ppi.curves", "bt_ess_curves", "alpha"),
    ("evalcore.ppi.figures", "ess_curves_figure", "level"),
    ("evalcore.ppi.figures", "projection_figure", "level"),
    # subgroups
    ("evalcore.subgroups.estimates", "direct_estimates", "alpha"),
    ("evalcore.subgroups.estimates", "empirical_bayes", "alpha"),
    ("evalcore.subgroups.estimates", "finite_population", "alpha"),
    ("evalcore.subgroups.area", "area_estimates", "alpha"),
    ("evalcore.subgroups.holdout", "holdout_study", "alpha"),
    ("evalcore.subgroups.robust_intervals", "robust_critical_value", "alpha"),
    ("evalcore.subgroups.robust_intervals", "ebci", "alpha"),
    ("evalcore.subgroups.figures", "forest_plot", "level"),
    ("evalcore.subgroups.figures", "holdout_coverage_width", "level"),
    # calibration
    ("evalcore.calibration.estimators", "reliability_table", "alpha"),
    ("evalcore.calibration.estimators", "ece_interval", "level"),
    ("evalcore.calibration.estimators", "calibration_by_model", "level"),
    ("evalcore.calibration.estimators", "calibration_and_reliability", "level"),
    ("evalcore.calibration.estimators", "reliability_by_model", "alpha"),
    ("evalcore.calibration.estimators", "selective_prediction_curve", "alpha"),
    ("evalcore.calibration.estimators", "area_interval", "level"),
    ("evalcore.calibration.estimators", "accuracy_at_coverage", "alpha"),
    ("evalcore.calibration.figures", "reliability_diagram", "level"),
    ("evalcore.calibration.figures", "selective_curves", "level"),
    # overall numbers, tables, labeling designs, the report
    ("evalcore.stats.overall", "overall_table", "alpha"),
    ("evalcore.stats.summaries", "mean_table", "alpha"),
    ("evalcore.stats.intervals", "wilson_interval", "alpha"),
    ("evalcore.sampling.designs", "estimate", "alpha"),
    ("evalcore.sampling.designs", "labels_needed", "alpha"),
    ("evalcore.sampling.designs", "simulate_design", "alpha"),
    ("evalcore.sampling.designs", "monte_carlo", "alpha"),
    ("evalcore.sampling.figures", "monte_carlo_curves", "level"),
    ("evalcore.sampling.plan", "labeling_plan", "alpha"),
    ("evalcore.stats.readout", "readout", "level"),
    ("evalcore.report.sections", "Settings", "level"),
]

#: the packages searched for level / alpha defaults not in PUBLIC
PACKAGES = ["evalcore.leaderboard", "evalcore.ppi", "evalcore.subgroups", "evalcore.calibration", "evalcore.stats",
            "evalcore.sampling", "evalcore.report"]


def _resolve(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def test_the_one_level_is_95_percent():
    assert DEFAULT_LEVEL == 0.95
    assert DEFAULT_ALPHA == 0.05  # exactly: 1 - 0.95 is 0.050000000000000044 in floats, DEFAULT_ALPHA is rounded


@pytest.mark.parametrize(("module", "name", "param"), PUBLIC, ids=[f"{m}.{n}" for m, n, _ in PUBLIC])
def test_public_defaults_are_the_one_level(module, name, param):
    default = inspect.signature(_resolve(module, name)).parameters[param].default
    expected = DEFAULT_LEVEL if param == "level" else DEFAULT_ALPHA
    assert default == expected, f"{module}.{name}({param}=...) defaults to {default!r}, not {expected!r}"


def _numeric_level_defaults():
    """(module, qualname, parameter, default) of every public function / class / method of PACKAGES with a
    parameter named like level or alpha whose default is a number."""
    found = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        names = [package] + [info.name for info in pkgutil.walk_packages(pkg.__path__, package + ".")]
        for module_name in names:
            module = importlib.import_module(module_name)
            for name, obj in vars(module).items():
                if name.startswith("_") or getattr(obj, "__module__", None) != module_name:
                    continue
                if inspect.isclass(obj):
                    members = [(name, obj)] + [(f"{name}.{k}", v) for k, v in vars(obj).items()
                                               if inspect.isfunction(v) and not k.startswith("_")]
                elif inspect.isfunction(obj):
                    members = [(name, obj)]
                else:
                    continue
                for qualname, member in members:
                    try:
                        params = inspect.signature(member).parameters.values()
                    except (TypeError, ValueError):
                        continue
                    for p in params:
                        numeric = isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
                        if numeric and ("level" in p.name or "alpha" in p.name):
                            found.append((module_name, qualname, p.name, p.default))
    return found


def test_every_level_default_is_listed():
    found = _numeric_level_defaults()
    listed = {(m, n, p) for m, n, p in PUBLIC}
    seen = {(m, n, p) for m, n, p, _ in found}
    assert listed <= seen, f"the search misses listed functions: {sorted(listed - seen)}"  # a broken walk fails
    missing = [f"{m}.{n}({p}={d!r})" for m, n, p, d in found if (m, n, p) not in listed]
    assert not missing, "public level/alpha defaults not in PUBLIC (add them, defaulting to DEFAULT_LEVEL): " \
        + ", ".join(missing)
