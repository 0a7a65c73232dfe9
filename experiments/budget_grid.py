"""A grid search through a shared budget (docs/budget.md): GridSearchCV over 3 learning rates with 3 folds
(9 fits and the refit) of DPClassifier(epsilon=1, delta=1e-6) on breast_cancer, every fit charged to one
dpsosp.Budget. Prints what the budget spent (the fits' curves composed by PLD) against basic and advanced
composition of the fits' own (epsilon, delta).

    PYTHONPATH=build/python /usr/bin/python3 experiments/budget_grid.py
"""
import math

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV

import dpsosp
from dpsosp import DPClassifier


def main():
    X, y = load_breast_cancer(return_X_y=True)
    budget = dpsosp.Budget(10, 1e-5)
    GridSearchCV(DPClassifier(epsilon=1, delta=1e-6, classes=[0, 1], budget=budget, random_state=0),
                 {"learning_rate": [0.5, 1, 2]}, cv=3).fit(X, y)
    k = len(budget.ledger)
    # Dwork-Rothblum-Vadhan advanced composition of k (1, 1e-6)-DP fits, at an extra delta' = 1e-5.
    advanced = math.sqrt(2 * k * math.log(1 / 1e-5)) + k * (math.e - 1)
    print(f"fits charged: {k} (each (1, 1e-6)-DP; its curve alone at delta 1e-5: epsilon "
          f"{budget.ledger[0]['epsilon']:.4f})")
    print(f"budget (PLD composition of the curves): epsilon {budget.spent():.3f} at delta 1e-5")
    print(f"basic composition: epsilon {k * 1.0:.3f} at delta {k * 1e-6:.0e}")
    print(f"advanced composition: epsilon {advanced:.3f} at delta {k * 1e-6 + 1e-5:.0e}")
    print(f"remaining (a Gaussian release the budget still admits): epsilon {budget.remaining():.3f}")


if __name__ == "__main__":
    main()
