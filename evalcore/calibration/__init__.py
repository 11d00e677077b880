"""Calibration: ECE with its interval and test, reliability tables, selective prediction (:mod:`.estimators`);
reliability diagrams and selective curves (:mod:`.figures`).
"""

from .estimators import (ECEResult, AreaResult, SelectiveResult, bin_index, expected_calibration_error, reliability_table, ece_interval, calibration_by_model, calibration_and_reliability, reliability_by_model, selective_prediction_curve, coverage_accuracy_area, area_interval, accuracy_at_coverage)

__all__ = ['AreaResult', 'ECEResult', 'SelectiveResult', 'accuracy_at_coverage', 'area_interval', 'bin_index', 'calibration_and_reliability', 'calibration_by_model', 'coverage_accuracy_area', 'ece_interval', 'expected_calibration_error', 'reliability_by_model', 'reliability_table', 'selective_prediction_curve']
