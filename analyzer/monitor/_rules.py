"""The monitor's rules file (TOML): which checks run on which live traces, how often, at what cost.

A rules file has one ``[monitor]`` table (when a trace is complete, batches, windows, alerts)
and one ``[[rule]]`` table per check::

    [monitor]
    complete_after = 5.0     # seconds of quiet after a trace's root span arrived
    window = 50              # evaluated traces per window
    webhook = "https://hooks.example.com/T000/B000"

    [[rule]]
    name = "grounded"
    analysis = "judge"       # any analysis whose config reads `traces`: judge, paths, a plugin's
    sample = 0.1             # share of traces, chosen by a hash of the trace id
    services = ["clinic-api"]
    calls_per_minute = 60
    [rule.config]            # the analysis's config record (`traces` is the monitor's)
    judge = "lexical"

Every field is checked when the file is read; an error names the file and the field
(``rule[0].sample``) and the monitor does not start.
"""

from __future__ import annotations

import fnmatch
import hashlib
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from groundtrace.analyzer._invalid import located
from groundtrace.analyzer.errors import ConfigError

__all__ = ["MonitorSettings", "Rule", "Rules", "load_rules", "sampled"]


class MonitorSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The ``[monitor]`` table: completion, batching, windows and alerts.

    Attributes:
        complete_after: seconds without a new span after the trace's root span arrived before
            the trace counts as complete and is evaluated.
        give_up_after: seconds after a trace's first span with still no root span: the trace
            is skipped as incomplete (named in the status).
        batch_size: complete sampled traces evaluated together (one analysis run).
        max_queue: complete sampled traces waiting for evaluation; beyond it the oldest are
            skipped as ``behind`` (a backfill evaluates them later) and ingest is never slowed.
        window: evaluated traces in a rule's window (the rate alerts look at).
        baseline: evaluated traces before the window that the window is compared with.
        alert_probability: posterior probability that the window fails more often than the
            baseline (plus ``margin``) at which an incident opens.
        recover_probability: the incident recovers when that probability falls below this.
        margin: failure-rate difference the window must exceed the baseline by.
        webhook: URL an incident and its recovery are POSTed to (JSON; Slack-compatible
            ``text``); None: alerts go to stdout and the status file only.
        seed: the seed of the posterior draws.
        draws: posterior draws per window.
    """

    complete_after: float = 5.0
    give_up_after: float = 300.0
    batch_size: int = 20
    max_queue: int = 1000
    window: int = 50
    baseline: int = 200
    alert_probability: float = 0.95
    recover_probability: float = 0.5
    margin: float = 0.05
    webhook: str | None = None
    seed: int = 20260709
    draws: int = 4000


class Rule(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One ``[[rule]]``: an analysis run on a sample of the live traces.

    Attributes:
        name: the rule's name (unique; part of the journal key).
        analysis: the analysis's name (``groundtrace.analyzer.get_analysis``); its config
            must read trace files from a ``traces`` field.
        sample: share of traces evaluated, in [0, 1], chosen by a hash of the trace id: the
            same traces online, in a backfill and after a restart.
        services: ``service.name`` values a trace must have (empty: any).
        versions: ``service.version`` values (the app version; empty: any).
        case_ids: ``fnmatch`` patterns the trace's case id must match (empty: any).
        attributes: span attributes the root span (or its resource) must have, by value.
        calls_per_minute: model calls the rule may make per minute (None: no ceiling).
        cost_per_day: USD the rule may spend per UTC day (None: no ceiling); needs ``prices``.
        prices: the price table file of ``cost_per_day``.
        checks: the verdicts that decide pass or fail, by name or its last part
            (``adherence`` for ``groundtrace.judge.adherence``); empty: every verdict.
        alert: whether the rule's windows may open incidents.
        judge_record: validation record of the judge (``groundtrace judge validate``): a judge
            rule alerts only with a gate-eligible record for the same judge.
        config: the analysis's config fields (``traces`` is set by the monitor).
    """

    name: str
    analysis: str
    sample: float = 1.0
    services: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()
    attributes: dict[str, str | int | float | bool] = msgspec.field(default_factory=dict)
    calls_per_minute: int | None = None
    cost_per_day: float | None = None
    prices: str | None = None
    checks: tuple[str, ...] = ()
    alert: bool = True
    judge_record: str | None = None
    config: dict[str, Any] = msgspec.field(default_factory=dict)

    def wants(self, service: str | None, version: str | None, case_id: str | None,
              attributes: dict[str, Any]) -> bool:  # fmt: skip
        """Whether a trace with these identities is one this rule evaluates (sampling aside)."""
        if self.services and service not in self.services:
            return False
        if self.versions and version not in self.versions:
            return False
        if self.case_ids and not (
            case_id is not None and any(fnmatch.fnmatchcase(case_id, p) for p in self.case_ids)
        ):
            return False
        return all(attributes.get(k) == v for k, v in self.attributes.items())

    def decides(self, name: str) -> bool:
        """Whether the verdict called ``name`` counts towards pass or fail."""
        return not self.checks or name in self.checks or name.rsplit(".", 1)[-1] in self.checks


class Rules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A rules file: the monitor's settings and its rules.

    Attributes:
        monitor: the ``[monitor]`` table.
        rule: the ``[[rule]]`` tables, in file order.
        source: the file read (set by :func:`load_rules`).
    """

    monitor: MonitorSettings = msgspec.field(default_factory=MonitorSettings)
    rule: tuple[Rule, ...] = ()
    source: str = ""


def sampled(trace_id: str, rate: float) -> bool:
    """Whether the trace is in a ``rate`` sample: the first 8 bytes of sha256(trace id),
    read as a fraction of 2**64, fall below ``rate`` (the same answer everywhere, always)."""
    if rate >= 1.0:
        return True
    digest = hashlib.sha256(trace_id.lower().encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") < rate * 2**64


def load_rules(path: str | Path) -> Rules:
    """Read and check a rules file.

    Raises:
        ConfigError: the file is missing, not TOML, or a field is invalid (file and field
            named): an unknown field, a wrong type, a sample outside [0, 1], a duplicate rule
            name, an unknown analysis or a config its analysis refuses.
    """
    from groundtrace.analyzer import get_analysis

    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("no such rules file", path=where) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not a TOML file: {exc}", path=where) from None
    try:
        rules = msgspec.convert(data, Rules)
    except msgspec.ValidationError as exc:
        message, field = located(exc)
        raise ConfigError(message, path=where, field=field or None) from None
    if not rules.rule:
        raise ConfigError("the file has no [[rule]]", path=where, field="rule")
    _check_settings(rules.monitor, where)
    seen: set[str] = set()
    for i, rule in enumerate(rules.rule):
        at = f"rule[{i}]"
        if not rule.name or rule.name in seen:
            raise ConfigError(f"rule name {rule.name!r} is empty or taken", path=where,
                              field=f"{at}.name")  # fmt: skip
        seen.add(rule.name)
        if not 0.0 <= rule.sample <= 1.0:
            raise ConfigError(f"sample must be in [0, 1], got {rule.sample}", path=where,
                              field=f"{at}.sample")  # fmt: skip
        if rule.calls_per_minute is not None and rule.calls_per_minute < 1:
            raise ConfigError("calls_per_minute must be >= 1", path=where,
                              field=f"{at}.calls_per_minute")  # fmt: skip
        if rule.cost_per_day is not None and (rule.cost_per_day <= 0 or rule.prices is None):
            raise ConfigError("cost_per_day must be > 0 USD and needs prices (a price table "
                              "file)", path=where, field=f"{at}.cost_per_day")  # fmt: skip
        try:
            analysis = get_analysis(rule.analysis)
        except ConfigError as exc:
            raise ConfigError(exc.args[0], path=where, field=f"{at}.analysis") from None
        config_of(analysis.config, rule, ("<batch>",), where=where, at=at)
    return msgspec.structs.replace(rules, source=where)


def _check_settings(settings: MonitorSettings, where: str) -> None:
    positive = ("complete_after", "give_up_after", "batch_size", "max_queue", "window", "draws")
    for name in positive:
        if getattr(settings, name) <= 0:
            raise ConfigError(f"{name} must be > 0", path=where, field=f"monitor.{name}")
    if settings.baseline < settings.window:
        raise ConfigError("baseline must be >= window", path=where, field="monitor.baseline")
    if not 0.0 < settings.recover_probability < settings.alert_probability < 1.0:
        raise ConfigError("need 0 < recover_probability < alert_probability < 1", path=where,
                          field="monitor.alert_probability")  # fmt: skip


def config_of(kind: type[Any], rule: Rule, traces: tuple[str, ...], *, where: str = "",
              at: str = "rule") -> Any:  # fmt: skip
    """The analysis's config record for ``rule`` reading ``traces``.

    Raises:
        ConfigError: the analysis reads no ``traces`` or refuses a config field.
    """
    fields = getattr(kind, "__struct_fields__", ())
    if "traces" not in fields:
        raise ConfigError(
            f"analysis {rule.analysis!r} reads no trace files (its config has no `traces` "
            "field): the monitor cannot run it on live traces", path=where, field=f"{at}.analysis",
        )  # fmt: skip
    if "traces" in rule.config:
        raise ConfigError("`traces` is set by the monitor", path=where,
                          field=f"{at}.config.traces")  # fmt: skip
    try:
        return msgspec.convert({**rule.config, "traces": list(traces)}, kind)
    except msgspec.ValidationError as exc:
        message, field = located(exc)
        raise ConfigError(message, path=where, field=f"{at}.config.{field}".rstrip(".")) from None
