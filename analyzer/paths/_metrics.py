"""Path-channel metrics with seeded percentile-bootstrap intervals (SPEC 4.3).

All metrics are over the *strict* cases (``require_path`` true); ``not_required`` cases
are counted but never scored. Ratios of sums (citation precision and recall) are
resampled as ratios of resampled sums over cases; resamples whose denominator is zero are
dropped and counted (``dropped_resamples``). A metric with nothing to measure has value
``None`` and a note, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np
import numpy.typing as npt

from groundtrace.analyzer.stats import StatsSettings, bootstrap_sums

from ._types import CaseVerdict

__all__ = ["MetricValue", "PathMetrics", "compute_metrics"]

FloatArray = npt.NDArray[np.float64]


class MetricValue(msgspec.Struct, frozen=True):
    """A metric with its percentile bootstrap interval.

    Attributes:
        value: the observed value (``None``: nothing to measure, see ``note``).
        ci: the interval ``(low, high)`` (``(None, None)`` when ``value`` is ``None``).
        n: the number of cases it is computed over.
        numerator: numerator of the observed value.
        denominator: denominator of the observed value.
        note: why the value is missing, if it is.
        dropped_resamples: resamples with a zero denominator (ratios only).
    """

    value: float | None
    ci: tuple[float | None, float | None]
    n: int
    numerator: float
    denominator: float
    note: str | None = None
    dropped_resamples: int = 0

    @property
    def ci_low(self) -> float | None:
        """Lower interval bound."""
        return self.ci[0]

    @property
    def ci_high(self) -> float | None:
        """Upper interval bound."""
        return self.ci[1]


class PathMetrics(msgspec.Struct, frozen=True):
    """Every path metric, the quadrant matrix and the masked failures.

    Attributes:
        path_pass_rate: share of strict cases whose status is ``pass``.
        citation_precision: cited sources actually read / citations.
        citation_recall: required sources read and cited / required sources.
        text_score: share of strict cases with a reference whose answer is correct.
        conditional_text_score: the same over path-passing cases only.
        quadrants: ``{"text_correct|path_pass": MetricValue}`` (share and count -- the
            numerator -- of each cell).
        masked_failures: case ids with a correct text but a failed path.
        status_counts: cases per status (strict and not).
        settings: the bootstrap settings (seed recorded; ``bootstrap`` in JSON).
        bootstrap_method: how the intervals were computed.
    """

    path_pass_rate: MetricValue
    citation_precision: MetricValue
    citation_recall: MetricValue
    text_score: MetricValue
    conditional_text_score: MetricValue
    quadrants: dict[str, MetricValue]
    masked_failures: tuple[str, ...]
    status_counts: dict[str, int]
    settings: StatsSettings = msgspec.field(name="bootstrap")
    bootstrap_method: str = "percentile, cases resampled"


def _ratio(
    num: Sequence[float], den: Sequence[float], settings: StatsSettings, empty_note: str
) -> MetricValue:
    n = len(num)
    total_num, total_den = float(sum(num)), float(sum(den))
    if n == 0 or total_den == 0:
        return MetricValue(None, (None, None), n, total_num, total_den, note=empty_note)
    paired = np.asarray([num, den], dtype=np.float64).T
    num_b, den_b = bootstrap_sums(paired, settings.n_resamples, settings.seed).T
    keep = den_b > 0
    ratios: FloatArray = num_b[keep] / den_b[keep]
    alpha = (1.0 - settings.confidence) / 2.0
    low, high = np.quantile(ratios, [alpha, 1.0 - alpha])
    value = total_num / total_den
    if np.all(ratios == ratios[0]):
        low = high = value
    return MetricValue(
        value,
        (float(low), float(high)),
        n,
        total_num,
        total_den,
        dropped_resamples=int((~keep).sum()),
    )


def _share(flags: Sequence[bool], settings: StatsSettings, empty_note: str) -> MetricValue:
    return _ratio([float(f) for f in flags], [1.0] * len(flags), settings, empty_note)


def compute_metrics(
    verdicts: Sequence[CaseVerdict], settings: StatsSettings | None = None
) -> PathMetrics:
    """Compute the path metrics over ``verdicts`` (see the module docstring)."""
    settings = settings or StatsSettings()
    strict = [v for v in verdicts if v.path_pass is not None]
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status.value] = counts.get(v.status.value, 0) + 1
    with_text = [v for v in strict if v.text_correct is not None]
    passing_text = [v for v in with_text if v.path_pass]
    quadrants = {
        f"text_{'correct' if t else 'incorrect'}|path_{'pass' if p else 'fail'}": _share(
            [v.text_correct is t and v.path_pass is p for v in with_text],
            settings,
            "no strict case with a reference answer",
        )
        for t in (True, False)
        for p in (True, False)
    }
    cited_cases = [v for v in strict if v.cited]
    required_cases = [v for v in strict if v.required_reads]
    return PathMetrics(
        path_pass_rate=_share(
            [bool(v.path_pass) for v in strict], settings, "no case requires a path check"
        ),
        citation_precision=_ratio(
            [len(v.cited_read) for v in cited_cases],
            [len(v.cited) for v in cited_cases],
            settings,
            "no strict case cites anything",
        ),
        citation_recall=_ratio(
            [len(v.required_cited) for v in required_cases],
            [len(v.required_reads) for v in required_cases],
            settings,
            "no strict case has required reads",
        ),
        text_score=_share(
            [bool(v.text_correct) for v in with_text], settings, "no reference answers"
        ),
        conditional_text_score=_share(
            [bool(v.text_correct) for v in passing_text],
            settings,
            "no path-passing case with a reference answer",
        ),
        quadrants=quadrants,
        masked_failures=tuple(v.case_id for v in with_text if v.text_correct and not v.path_pass),
        status_counts=counts,
        settings=settings,
    )
