"""Rolling windows of a rule's outcomes, and when they open or close an incident.

Each evaluated trace that passed or failed enters its rule's history in the order it was
evaluated. The *window* is the last ``window`` outcomes; the *baseline* the ``baseline``
outcomes before it (frozen while an incident is open, so failures never become the norm).
Failure rates are Beta(1 + failed, 1 + passed) posteriors, as the gate's: an incident opens
when P(window rate > baseline rate + margin) reaches ``alert_probability``, and recovers when
it falls below ``recover_probability`` (the hysteresis keeps one incident one alert). The
draws are seeded by the rule and the outcome's position, so a replay of the same outcomes
decides the same.
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ._rules import MonitorSettings

__all__ = ["Change", "RuleWindow", "Window"]


@dataclass(frozen=True, slots=True)
class Window:
    """Failures among evaluated traces, with the rate's 95 % interval.

    Attributes:
        failed: traces that failed.
        n: traces evaluated (passed or failed).
        rate: failed / n (None when n is 0).
        interval: the 2.5 % and 97.5 % quantiles of the Beta(1 + failed, 1 + passed) posterior.
    """

    failed: int
    n: int
    rate: float | None
    interval: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class Change:
    """An incident opened or recovered.

    Attributes:
        state: ``incident`` or ``recovered``.
        rule: the rule's name.
        incident: the incident's number within the rule (1, 2, ...).
        probability: P(window rate > baseline rate + margin).
        window: the window's failures.
        baseline: the baseline's failures.
        versions: app version -> its failures in the window (the worst first).
        first_trace: the window's oldest trace id.
        last_trace: the trace whose outcome decided.
        position: how many outcomes the rule had when it decided.
    """

    state: str
    rule: str
    incident: int
    probability: float
    window: Window
    baseline: Window
    versions: dict[str, Window]
    first_trace: str
    last_trace: str
    position: int


def _window(failed: int, n: int, draws: np.ndarray | None) -> Window:
    if n == 0 or draws is None:
        return Window(failed, n, None if n == 0 else failed / n, None)
    low, high = np.quantile(draws, [0.025, 0.975])
    return Window(failed, n, failed / n, (round(float(low), 4), round(float(high), 4)))


@dataclass(slots=True)
class RuleWindow:
    """The window, baseline and incident state of one rule.

    Args:
        rule: the rule's name (seeds the draws).
        settings: the monitor's window and alert settings.
        may_alert: whether this rule may open incidents (``alert`` and, for a judge, a
            gate-eligible validation record).
    """

    rule: str
    settings: MonitorSettings
    may_alert: bool = True
    history: deque[tuple[str, str, bool]] = field(init=False)
    position: int = 0
    incidents: int = 0
    open_since: int | None = None
    frozen: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.history = deque(maxlen=self.settings.window + self.settings.baseline)

    def add(self, trace_id: str, version: str | None, failed: bool) -> Change | None:
        """Enter one outcome; the incident it opens or recovers, if any."""
        self.history.append((trace_id, version or "unknown", failed))
        self.position += 1
        if not self.may_alert:
            return None
        window = list(self.history)[-self.settings.window :]
        before = list(self.history)[: -self.settings.window]
        if len(window) < self.settings.window:
            return None
        base = self.frozen or (sum(f for *_, f in before), len(before))
        if base[1] < self.settings.window:
            return None
        failed_now = sum(f for *_, f in window)
        p, window_draws, base_draws = self._probability(failed_now, len(window), *base)
        opening = self.open_since is None and p >= self.settings.alert_probability
        closing = self.open_since is not None and p < self.settings.recover_probability
        if not (opening or closing):
            return None
        if opening:
            self.incidents += 1
            self.open_since = self.position
            self.frozen = base
        else:
            self.open_since = None
            self.frozen = None
        return Change(
            state="incident" if opening else "recovered", rule=self.rule,
            incident=self.incidents, probability=round(p, 4),
            window=_window(failed_now, len(window), window_draws),
            baseline=_window(base[0], base[1], base_draws),
            versions=self._versions(window), first_trace=window[0][0], last_trace=trace_id,
            position=self.position,
        )  # fmt: skip

    def _probability(
        self, failed: int, n: int, base_failed: int, base_n: int
    ) -> tuple[float, np.ndarray, np.ndarray]:
        digest = hashlib.sha256(f"{self.rule}:{self.position}".encode()).digest()
        rng = np.random.default_rng([self.settings.seed, int.from_bytes(digest[:8], "big")])
        draws = self.settings.draws
        now = rng.beta(1 + failed, 1 + n - failed, draws)
        base = rng.beta(1 + base_failed, 1 + base_n - base_failed, draws)
        return float(np.mean(now > base + self.settings.margin)), now, base

    @staticmethod
    def _versions(window: list[tuple[str, str, bool]]) -> dict[str, Window]:
        counts: dict[str, list[int]] = {}
        for _, version, failed in window:
            c = counts.setdefault(version, [0, 0])
            c[0] += failed
            c[1] += 1
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1][0] / kv[1][1], kv[0]))
        return {v: Window(f, n, f / n, None) for v, (f, n) in ordered}

    def snapshot(self) -> dict[str, object]:
        """The window by version, the baseline and the incident state (for the status file)."""
        window = list(self.history)[-self.settings.window :]
        before = list(self.history)[: -self.settings.window]
        base = self.frozen or (sum(f for *_, f in before), len(before))
        rng = np.random.default_rng(self.settings.seed)
        by_version: dict[str, Window] = {}
        for version, w in self._versions(window).items():
            draws = rng.beta(1 + w.failed, 1 + w.n - w.failed, self.settings.draws)
            by_version[version] = _window(w.failed, w.n, draws)
        failed_now = sum(f for *_, f in window)
        return {
            "evaluated": self.position,
            "window": _window(failed_now, len(window), rng.beta(
                1 + failed_now, 1 + len(window) - failed_now, self.settings.draws)),
            "versions": by_version,
            "baseline": _window(base[0], base[1], None),
            "incident": None if self.open_since is None else {
                "number": self.incidents, "since_outcome": self.open_since},
            "alerts": "on" if self.may_alert else "off",
        }  # fmt: skip
