"""Exact Shapley values from a value function over every coalition (the interventions' support
chunks, the attribution's sources)."""

from __future__ import annotations

from collections.abc import Sequence
from math import factorial

import numpy as np

__all__ = ["coalitions", "shapley"]


def coalitions(k: int) -> list[tuple[bool, ...]]:
    """The ``2**k`` coalitions of ``k`` players, coalition ``m`` holding player ``j`` when bit
    ``j`` of ``m`` is set (the order :func:`shapley` reads its values in)."""
    return [tuple(bool(m >> j & 1) for j in range(k)) for m in range(2**k)]


def shapley(values: Sequence[float]) -> list[float]:
    """Exact Shapley values of the ``k`` players whose ``2**k`` coalition values are given in
    :func:`coalitions` order.

    ``phi_j = sum over S without j of |S|! (k - |S| - 1)! / k! * (v(S + j) - v(S))``, so the
    values sum to ``v(all) - v(empty)`` (efficiency).
    """
    v = np.asarray(values, dtype=np.float64)
    k = int(v.size).bit_length() - 1
    assert v.size == 2**k, f"{v.size} values are not one per coalition"
    sizes = np.array([bin(m).count("1") for m in range(2**k)])
    weights = np.array([factorial(s) * factorial(k - s - 1) / factorial(k) for s in range(k)])
    phi = []
    for j in range(k):
        without = np.array([m for m in range(2**k) if not m >> j & 1], dtype=np.int64)
        phi.append(float(np.sum(weights[sizes[without]] * (v[without | (1 << j)] - v[without]))))
    return phi
