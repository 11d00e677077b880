"""Real-model demo: out-of-fold predictions of scikit-learn classifiers on datasets bundled with scikit-learn.

Kept apart from :mod:`evalcore.demo.synthetic` because importing scikit-learn costs about a second; the dashboard loads this
module only when the demo is chosen. The frame is a canonical per-example log (see :mod:`evalcore.data.validation`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from evalcore.data.schema import LOG_LABEL_ROLES


_DATASETS = {
    "digits": (load_digits, "image"),
    "breast_cancer": (load_breast_cancer, "tabular"),
    "wine": (load_wine, "tabular"),
    "iris": (load_iris, "tabular"),
}


def _classifiers(seed: int) -> dict:
    """The six scikit-learn classifiers of the real-model demo, keyed by model name.

    The SVC gets Platt-scaled probabilities through ``CalibratedClassifierCV(ensemble=False)``,
    scikit-learn's replacement for the deprecated ``SVC(probability=True)``.
    """
    return {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "naive-bayes": GaussianNB(),
        "random-forest": RandomForestClassifier(n_estimators=100, random_state=seed),
        "knn-15": KNeighborsClassifier(n_neighbors=15),
        "tree-d6": DecisionTreeClassifier(max_depth=6, random_state=seed),
        "svm-rbf": make_pipeline(
            StandardScaler(), CalibratedClassifierCV(SVC(kernel="rbf"), ensemble=False)
        ),
    }


def _surrogate_of(name: str) -> str:
    """The model whose probabilities give ``name`` its proxy: the forest, or logreg for it."""
    return "logreg" if name == "random-forest" else "random-forest"


def _out_of_fold(x: np.ndarray, y: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """Out-of-fold class probabilities of every classifier (5-fold, stratified, shuffled)."""
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    return {
        name: cross_val_predict(clf, x, y, cv=folds, method="predict_proba")
        for name, clf in _classifiers(seed).items()
    }


def _prediction_values(proba: np.ndarray, surrogate: np.ndarray, y: np.ndarray) -> dict:
    """Per-example correct, confidence, proxy and margin of one model's probabilities."""
    rows = np.arange(len(y))
    predicted = proba.argmax(axis=1)
    top2 = np.sort(proba, axis=1)[:, -2:]
    return {
        "correct": (predicted == y).astype(float),
        "confidence": proba[rows, predicted],
        "proxy": surrogate[rows, predicted],
        "margin": top2[:, 1] - top2[:, 0],
    }


def _dataset_rows(task: str, seed: int) -> dict[str, pd.DataFrame]:
    """Each classifier's per-example rows on one bundled dataset, keyed by model name."""
    loader, category = _DATASETS[task]
    data = loader()
    proba = _out_of_fold(data.data, data.target, seed)
    labels = {
        "example_id": [f"{task}-{i:04d}" for i in range(len(data.target))],
        "task": task,
        "category": category,
        "group": [f"{task}/class {data.target_names[label]}" for label in data.target],
    }
    return {
        name: pd.DataFrame(
            {
                "model": name,
                **labels,
                **_prediction_values(p, proba[_surrogate_of(name)], data.target),
            }
        )
        for name, p in proba.items()
    }


def sklearn_models(seed: int = 0) -> pd.DataFrame:
    """Six scikit-learn classifiers on four bundled datasets, every example scored out-of-fold.

    ``correct`` is whether the top class is the true one (all rows labeled), ``confidence`` the
    top-class probability, ``proxy`` a different model's probability for that same class (the
    random forest's; the logistic regression's for the forest itself) and ``margin`` the gap
    between the two highest probabilities. Rows are ordered by model, then dataset.
    """
    by_task = [_dataset_rows(task, seed) for task in _DATASETS]
    log = pd.concat(
        [frames[name] for name in by_task[0] for frames in by_task], ignore_index=True
    )
    log[list(LOG_LABEL_ROLES)] = log[list(LOG_LABEL_ROLES)].astype(str)
    return log
