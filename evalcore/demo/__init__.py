"""The built-in demos: a synthetic benchmark with known truth and pairwise battles (:mod:`.synthetic`), real
scikit-learn models (:mod:`.sklearn_models`, imported on demand).
"""

from .synthetic import (SyntheticBenchmark, Battles, synthetic_benchmark, true_accuracy, pairwise_battles)

__all__ = ['Battles', 'SyntheticBenchmark', 'pairwise_battles', 'synthetic_benchmark', 'true_accuracy']
