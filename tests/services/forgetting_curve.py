"""The forgetting curve the search statement computes (app/repository/search.py), written out
in Python as the tests' reference (Ebbinghaus: R = e^(-t/S)).

t is the age in days since the memory was last recalled (or stored, if never);
S, its stability, grows with every recall: S = strength_days * (1 + access_count).
Pinned memories do not decay (R = 1). The search SQL computes the same formula
(app/repository/search.py); tests hold the two together.
"""

from __future__ import annotations

import math


def retention(age_days: float, access_count: int, pinned: bool, strength_days: float) -> float:
    if pinned:
        return 1.0
    stability = strength_days * (1 + max(access_count, 0))
    return math.exp(-max(age_days, 0.0) / stability)


def ranked_score(
    similarity: float, retention_value: float, decay_weight: float, relevance: float = 1.0
) -> float:
    """score = similarity * ((1 - w) + w * R) * relevance; w = 0 turns decay off."""
    return similarity * ((1.0 - decay_weight) + decay_weight * retention_value) * relevance
