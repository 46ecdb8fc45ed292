"""Jittered exponential backoff that starts over after a success."""
from __future__ import annotations

import random
from typing import Optional


class Backoff:
    def __init__(self, base_s: float = 0.25, cap_s: float = 30.0, rng: Optional[random.Random] = None) -> None:
        self.base_s = base_s
        self.cap_s = cap_s
        self.rng = rng or random.Random()
        self.failures = 0

    def next_delay(self, retry_after_s: Optional[float] = None) -> float:
        """Half the exponential step plus a random half, so many agents do not retry in step.

        A server's `Retry-After` is a floor: never ask sooner than it said.
        """
        step = min(self.cap_s, self.base_s * (2 ** self.failures))
        self.failures += 1
        delay = step / 2 + self.rng.uniform(0, step / 2)
        if retry_after_s is not None:
            delay = max(delay, retry_after_s)
        return delay

    def reset(self) -> None:
        self.failures = 0
