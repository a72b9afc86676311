"""The monitor: sampled checks on live traces, exactly once, with windows and alerts.

:meth:`Monitor.follow` reads a receiver's folder behind it (the receiver answers the app
only once a batch is on disk, so evaluation never slows ingest), :meth:`Monitor.backfill` reads
stored trace files; both put the traces back together, sample them by a hash of the trace id,
and evaluate each rule's complete traces in batches through the one driver
(``run_analysis_async``). Every (rule, judge fingerprint, trace) outcome is journaled once
(sqlite, ``FULL`` sync) before its verdicts are written back and its window moves, so a
restart, a SIGKILL or a backfill after the online run evaluates nothing twice and misses
nothing; a changed rubric, model or config file is another fingerprint, and re-evaluates.

Usage (in an async service or a notebook; ``groundtrace monitor`` is the command)::

    import asyncio

    from groundtrace.analyzer.monitor import Monitor, load_rules

    async def main(stop: asyncio.Event) -> None:
        with Monitor(load_rules("rules.toml"), "monitor/") as monitor:
            await monitor.follow("traces/", stop=stop)
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import orjson

from groundtrace.analyzer import get_analysis, run_analysis_async
from groundtrace.analyzer._settings import ModelCalls
from groundtrace.analyzer.errors import (
    BudgetReachedError,
    ConfigError,
    GroundtraceError,
    InputError,
    RunStoppedError,
)
from groundtrace.analyzer.executor import UnitJournal
from groundtrace.analyzer.llm import PriceTable

from ._alerts import Alerts
from ._assemble import Assembler, FolderTail, LiveTrace, is_tau_file, tau_trace, write_batch
from ._rules import Rule, Rules, config_of, sampled
from ._windows import RuleWindow

__all__ = ["Monitor", "Outcome"]

#: Verdict labels that pass; labels that are no verdict. Every other label fails.
PASS_LABELS = frozenset({"pass", "promote"})
NO_VERDICT = frozenset({"not_required", "not_applicable", "not_evaluable"})
#: Attempts of a batch that errs (a backend down) before its traces are left to a backfill.
ATTEMPTS = 3
STATUS_NAME = "status.json"
JOURNAL_NAME = "journal.sqlite"


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """One rule's outcome on one trace (the journal's record).

    Attributes:
        rule: the rule's name.
        trace_id: hex trace id.
        fingerprint: the rule's fingerprint (analysis, config, the files it names).
        outcome: ``pass``, ``fail``, ``not_applicable`` (no verdict on the trace) or
            ``error`` (the evaluation failed; a later run retries it).
        version: the trace's app version (``service.version``).
        case_id: the trace's case id, when it has one.
        verdicts: (name, label, score) of each verdict on the trace.
        reason: why there is no pass or fail, when there is none.
        source: ``online`` or ``backfill``.
        seq: position in the rule's evaluation order (the windows replay it).
    """

    rule: str
    trace_id: str
    fingerprint: str
    outcome: str
    version: str | None = None
    case_id: str | None = None
    verdicts: tuple[tuple[str, str | None, float | None], ...] = ()
    reason: str | None = None
    source: str = "online"
    seq: int = 0


def fingerprint(rule: Rule) -> str:
    """sha256 over the rule's analysis, config and the bytes of every file its config names
    (a rubric, a profile, a case file): what makes an earlier outcome still valid."""
    digest = hashlib.sha256(rule.analysis.encode())
    digest.update(orjson.dumps(rule.config, option=orjson.OPT_SORT_KEYS))
    for value in sorted(str(v) for v in _strings(rule.config)):
        path = Path(value)
        with contextlib.suppress(OSError, ValueError):
            if path.is_file():
                digest.update(value.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def trace_outcome(verdicts: Sequence[Any]) -> str:
    """``fail`` if a per-request verdict fails, else ``pass`` if one passes, else ``error``
    if one is an evaluation error, else ``not_applicable``."""
    seen = set()
    for v in verdicts:
        if v.evidence_id is not None:
            continue
        if v.error_type is not None:
            seen.add("error")
        elif v.label in PASS_LABELS:
            seen.add("pass")
        elif v.label is not None and v.label not in NO_VERDICT:
            seen.add("fail")
    return next((o for o in ("fail", "pass", "error") if o in seen), "not_applicable")


class _RuleState:
    """One rule at run time: its analysis, fingerprint, queue, window and counters."""

    def __init__(self, rule: Rule, rules: Rules, may_alert: bool) -> None:
        self.rule = rule
        self.analysis = get_analysis(rule.analysis)
        if self.analysis.verdicts is None:
            raise ConfigError(f"analysis {rule.analysis!r} gives no per-trace verdicts: the "
                              "monitor cannot run it", path=rules.source)  # fmt: skip
        self.fingerprint = fingerprint(rule)
        self.queue: deque[tuple[LiveTrace, float]] = deque()
        self.window = RuleWindow(rule.name, rules.monitor, may_alert=may_alert)
        self.counts: dict[str, int] = {}
        self.lags: deque[float] = deque(maxlen=2000)
        self.seq = 0
        self.attempts = 0
        self.paused_until = 0.0
        self.calls: deque[tuple[float, int]] = deque()
        self.day_cost: tuple[str, float] = ("", 0.0)
        #: The price table of ``cost_per_day``, read once (a bad file stops the start).
        self.prices = None if rule.prices is None else PriceTable.from_file(rule.prices)

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def key(self, trace_id: str) -> str:
        return f"{self.rule.name}|{self.fingerprint}|{trace_id}"


class Monitor:
    """Evaluates live or stored traces under a rules file, into the state folder ``state``.

    Args:
        rules: the rules (:func:`load_rules`).
        state: the monitor's folder: its journal (locked: one monitor per folder), status,
            alerts, and each rule's run folder.
        write_back: sends each batch's verdicts on (the CLI's ``--write-back``); ``None``: none.
        say: where one line per batch, incident and recovery goes (the CLI prints it).
        clock: monotonic seconds (a test's clock).
    """

    def __init__(
        self,
        rules: Rules,
        state: str | Path,
        *,
        write_back: Callable[[Any], None] | None = None,
        say: Callable[[str], None] = lambda line: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rules = rules
        self.state = Path(state)
        self.write_back = write_back
        self.say = say
        self.clock = clock
        self._states = [_RuleState(r, rules, _may_alert(r, rules.source)) for r in rules.rule]
        for ruled in self._states:
            if not ruled.window.may_alert and ruled.rule.alert:
                say(f"rule {ruled.rule.name}: no alerts (a judge rule alerts only with a "
                    "gate-eligible judge_record of the same judge)")  # fmt: skip
        top = max(r.sample for r in rules.rule)
        self.assembler = Assembler(
            lambda trace_id: sampled(trace_id, top),
            complete_after=rules.monitor.complete_after,
            give_up_after=rules.monitor.give_up_after, clock=clock,
        )  # fmt: skip
        self.alerts = Alerts(self.state / "alerts.jsonl", rules.monitor.webhook, say)
        self._journal: UnitJournal | None = None
        self._source = "online"
        self._batches = 0
        self._behind = 0

    def __enter__(self) -> Monitor:
        self.state.mkdir(parents=True, exist_ok=True)
        self._journal = UnitJournal(self.state / JOURNAL_NAME)
        try:
            self._replay_journal()
        except BaseException:
            self._journal.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    @property
    def journal(self) -> UnitJournal:
        if self._journal is None:
            raise ConfigError("the monitor is not open: use `with Monitor(...) as monitor:`")
        return self._journal

    def _replay_journal(self) -> None:
        """Rebuild each rule's window from the journal, in evaluation order; incidents the
        replay opens or closes that were never sent are sent now."""
        by_rule = {s.rule.name: s for s in self._states}
        done = sorted(self.journal.completed(Outcome), key=lambda o: (o.rule, o.seq))
        for o in done:
            state = by_rule.get(o.rule)
            if state is None or o.fingerprint != state.fingerprint:
                continue
            state.seq = max(state.seq, o.seq)
            state.count(f"evaluated_{o.source}")
            if o.outcome in ("pass", "fail"):
                change = state.window.add(o.trace_id, o.version, o.outcome == "fail")
                if change is not None:
                    self.alerts.replayed(change)

    # -- reading ---------------------------------------------------------------------------

    async def follow(
        self, folder: str | Path, *, stop: asyncio.Event, poll: float = 0.25
    ) -> dict[str, Any]:
        """Evaluate the traces the receiver writes into ``folder`` until ``stop`` is set (the
        batch in flight finishes); the final status. A restart reads the folder again: the
        journal skips what was done, and what was still queued is evaluated then."""
        tail = FolderTail(folder)
        self._source = "online"
        written: tuple[int, ...] = ()
        while True:
            stopping = stop.is_set()
            lines = await asyncio.to_thread(lambda: list(tail.read()))
            for where, line in lines:
                self.assembler.add_line(where, line)
            self._take(*self.assembler.ripe())
            if not stopping:
                try:
                    await self._evaluate_ready(final=False)
                except RunStoppedError:  # a signal during a batch: stop as on ``stop``
                    stopping = True
            now = self._progress()
            if now != written or stopping:  # an idle monitor does not rewrite its status
                self._write_status()
                written = now
            if stopping:  # what is queued is evaluated by the next run (the journal lacks it)
                return self.status()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), poll)

    async def backfill(self, paths: Sequence[str | Path]) -> dict[str, Any]:
        """Apply the rules to stored trace files or folders: OTLP-JSON lines (the receiver's, a
        Collector's or the SDK's file exporter's) and τ lines (``groundtrace collect phoenix``
        pulls a Phoenix project into one; ``traces convert``): the same sampling and journal as
        online, every trace with a root span complete once all is read. The final status."""
        self._source = "backfill"
        stored: list[LiveTrace] = []
        for path in paths:
            p = Path(path)
            if not p.exists():
                raise InputError("no such file or folder", path=str(p))
            tail = FolderTail(p)
            for file in tail.files():
                if is_tau_file(file):  # whole traces: a `collect phoenix` or `traces convert` file
                    stored += self._tau_traces(file)
                else:
                    for where, line in tail.read_file(file):
                        self.assembler.add_line(where, line)
        done, lost = self.assembler.ripe(everything=True)
        self._take([*done, *(t for t in stored if t.root)], [*lost, *(t for t in stored
                                                                    if not t.root)])  # fmt: skip
        await self._evaluate_ready(final=True)
        self._write_status()
        return self.status()

    def _tau_traces(self, file: Path) -> list[LiveTrace]:
        """The sampled traces of a τ file (a bad line is counted as the tail's are)."""
        found: list[LiveTrace] = []
        top = max(r.sample for r in self.rules.rule)
        for n, line in enumerate(file.read_bytes().splitlines(), 1):
            if not line.strip():
                continue
            try:
                trace = tau_trace(line, self.clock())
            except (msgspec.DecodeError, msgspec.ValidationError):
                where = f"{file}:{n}"
                self.assembler.bad_lines[where] = self.assembler.bad_lines.get(where, 0) + 1
                continue
            if sampled(trace.trace_id, top):
                found.append(trace)
        return found

    def _take(self, done: list[LiveTrace], lost: list[LiveTrace]) -> None:
        now = self.clock()
        for trace in lost:
            for state in self._states:
                if self._selects(state, trace) and not trace.evaluation:
                    state.count("skipped_incomplete")
        for trace in done:
            for state in self._states:
                if not sampled(trace.trace_id, state.rule.sample):
                    continue
                if trace.evaluation:
                    state.count("skipped_evaluation_traffic")
                elif not self._selects(state, trace):
                    state.count("filtered")
                else:
                    state.queue.append((trace, now))
            self._shed(now)

    @staticmethod
    def _selects(state: _RuleState, trace: LiveTrace) -> bool:
        return state.rule.wants(trace.service, trace.version, trace.case_id, trace.attributes)

    def _shed(self, now: float) -> None:
        """Keep each rule's queue within ``max_queue``: the oldest are skipped (behind)."""
        for state in self._states:
            over = len(state.queue) - self.rules.monitor.max_queue
            for _ in range(max(0, over)):
                state.queue.popleft()
                state.count("skipped_behind")
                self._behind += 1

    # -- evaluating ------------------------------------------------------------------------

    async def _evaluate_ready(self, *, final: bool) -> None:
        size = self.rules.monitor.batch_size
        for state in self._states:
            while state.queue and (final or len(state.queue) >= size or self._due(state)):
                if self.clock() < state.paused_until:
                    break
                batch = [state.queue.popleft() for _ in range(min(size, len(state.queue)))]
                if not await self._evaluate(state, batch):
                    break

    def _due(self, state: _RuleState) -> bool:
        """A partial batch is due once its oldest trace waited ``complete_after``."""
        return self.clock() - state.queue[0][1] >= self.rules.monitor.complete_after

    async def _evaluate(self, state: _RuleState, batch: list[tuple[LiveTrace, float]]) -> bool:
        """Evaluate one batch; False when the rule must wait (budget, errors)."""
        todo = []
        for trace, ready in batch:
            entry = self.journal.entry(state.key(trace.trace_id))
            if entry is not None and entry.ok:
                state.count("already_evaluated")
            else:
                todo.append((trace, ready))
        if not todo:
            return True
        rule = state.rule
        budget, exhausted = self._budget(state)
        if exhausted is not None:
            state.queue.extendleft(reversed(todo))
            state.paused_until = self.clock() + 600.0
            self.say(f"rule {rule.name}: {exhausted}; paused")
            return False
        self._batches += 1
        batch_file = self.state / "batches" / f"{rule.name}-{self._batches:08d}.jsonl"
        files = write_batch((t for t, _ in todo), batch_file)
        try:
            return await self._run_batch(state, todo, files, budget)
        finally:
            for file in files:
                file.unlink(missing_ok=True)

    async def _run_batch(
        self,
        state: _RuleState,
        todo: list[tuple[LiveTrace, float]],
        batch: tuple[Path, ...],
        budget: Any,
    ) -> bool:
        rule = state.rule
        config = config_of(state.analysis.config, rule, tuple(str(p) for p in batch))
        if "cache" in getattr(config, "__struct_fields__", ()) and config.cache is None:
            config = msgspec.structs.replace(config, cache=str(self.state / "llm_cache.sqlite"))
        # units in flight as the analysis's command runs them: a model-calling record's
        # concurrency (its work and model calls in flight; else its call profile's, else the
        # analysis's default), else 4; the budget's bound holds either way
        calls = config if isinstance(config, ModelCalls) else ModelCalls()
        try:
            done = await run_analysis_async(
                state.analysis, config, out=self.state / "runs" / rule.name, budget=budget,
                concurrency=calls.in_flight(),
            )  # fmt: skip
            make = state.analysis.verdicts
            linked = None if done.result is None or make is None else make(done.result, config)
        except BudgetReachedError as exc:
            state.queue.extendleft(reversed(todo))
            state.paused_until = self.clock() + 60.0
            self.say(f"rule {rule.name}: {exc}; paused for a minute")
            return False
        except RunStoppedError:  # a signal stopped the run (not a budget): the monitor stops
            state.queue.extendleft(reversed(todo))
            raise
        except InputError as exc:  # the batch's traces themselves: the same on any re-run
            self._journal_all(state, todo, "not_applicable", str(exc))
            return True
        except GroundtraceError as exc:  # a backend down: retried, then left to a backfill
            state.attempts += 1
            if state.attempts < ATTEMPTS:
                state.queue.extendleft(reversed(todo))
                state.paused_until = self.clock() + 2.0**state.attempts
            else:
                state.attempts = 0
                state.count("errors", len(todo))
            self.say(f"rule {rule.name}: evaluation failed ({exc})")
            return False
        state.attempts = 0
        self._spent(state, done.calls)
        verdicts = list(linked.verdicts) if linked is not None else []
        by_trace: dict[str, list[Any]] = {}
        for v in verdicts:
            by_trace.setdefault(v.trace_id, []).append(v)
        # Written back before journaled: a kill in between evaluates the batch again and
        # writes it back again (a backend keyed by the verdict's identifier replaces it),
        # never journals a batch whose verdicts were not sent.
        if linked is not None and verdicts and self.write_back is not None:
            try:
                self.write_back(linked)
            except GroundtraceError as exc:
                state.count("write_back_failed")
                self.say(f"rule {rule.name}: write-back failed ({exc})")
        outcomes: dict[str, int] = {}
        for trace, ready in todo:
            found = by_trace.get(trace.trace_id, [])
            outcome = trace_outcome([v for v in found if rule.decides(v.name)])
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            reason = None if found else (done.reason or "the analysis gave no verdict")
            self._record(state, trace, outcome, found, reason)
            state.lags.append(self.clock() - ready)
        tally = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
        why = f" ({done.reason})" if done.reason is not None else ""
        self.say(f"rule {rule.name}: {len(todo)} trace(s): {tally}{why}")
        return True

    def _journal_all(self, state: _RuleState, todo: list[tuple[LiveTrace, float]],
                     outcome: str, reason: str) -> None:  # fmt: skip
        for trace, _ in todo:
            self._record(state, trace, outcome, [], reason)

    def _record(self, state: _RuleState, trace: LiveTrace, outcome: str, found: list[Any],
                reason: str | None) -> None:  # fmt: skip
        seq = state.seq + 1
        record = Outcome(
            rule=state.rule.name, trace_id=trace.trace_id, fingerprint=state.fingerprint,
            outcome=outcome, version=trace.version, case_id=trace.case_id,
            verdicts=tuple((v.name, v.label, v.score) for v in found), reason=reason,
            source=self._source, seq=seq,
        )  # fmt: skip
        kept = self.journal.record(state.key(trace.trace_id), record, ok=outcome != "error")
        if outcome == "error":
            state.count("errors")
            return
        if kept.decode(Outcome).seq != seq:  # evaluated before (another run): not counted again
            return
        state.seq = seq
        state.count(f"evaluated_{self._source}")
        if outcome in ("pass", "fail"):
            change = state.window.add(trace.trace_id, trace.version, outcome == "fail")
            if change is not None:
                self.alerts.send(change)
        else:
            state.count("not_scored")

    # -- budgets -----------------------------------------------------------------------------

    def _budget(self, state: _RuleState) -> tuple[Any, str | None]:
        """The budget of the rule's next batch, or why the rule must wait (today's cost)."""
        from groundtrace.analyzer.llm import Budget

        rule = state.rule
        if rule.calls_per_minute is None and rule.cost_per_day is None:
            return None, None
        now = self.clock()
        while state.calls and now - state.calls[0][0] > 60.0:
            state.calls.popleft()
        calls_left = None
        if rule.calls_per_minute is not None:
            calls_left = max(1, rule.calls_per_minute - sum(n for _, n in state.calls))
        cost_left = None
        if rule.cost_per_day is not None and state.prices is not None:
            day, spent = state.day_cost
            cost_left = rule.cost_per_day - (spent if day == _today() else 0.0)
            if cost_left <= 0:
                return None, f"cost_per_day {rule.cost_per_day} USD reached"
        return Budget(max_calls=calls_left, max_cost=cost_left, prices=state.prices), None

    def _spent(self, state: _RuleState, calls: dict[str, Any]) -> None:
        n = sum(u.calls for u in calls.values())
        if n:
            state.calls.append((self.clock(), n))
        rule = state.rule
        if rule.cost_per_day is not None and state.prices is not None and calls:
            cost = state.prices.cost(calls)
            day, spent = state.day_cost
            state.day_cost = (_today(), (spent if day == _today() else 0.0) + cost)

    # -- status ------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What the monitor did: per rule counts, lag, queue, window and incident (plain
        JSON values, as ``status.json`` holds them)."""
        rules: dict[str, Any] = {}
        for state in self._states:
            lags = sorted(state.lags)
            rules[state.rule.name] = {
                "analysis": state.rule.analysis, "fingerprint": state.fingerprint,
                "counts": dict(sorted(state.counts.items())), "queued": len(state.queue),
                "lag_seconds": None if not lags else {
                    "p50": round(lags[len(lags) // 2], 3),
                    "p95": round(lags[min(len(lags) - 1, int(len(lags) * 0.95))], 3)},
                **state.window.snapshot(),
            }  # fmt: skip
        status = {
            "rules": rules,
            "ingest": {"spans_read": self.assembler.spans_read,
                       "traces_pending": len(self.assembler.pending),
                       "bad_lines": self.assembler.bad_lines, "skipped_behind": self._behind},
            "alerts": self.alerts.summary(),
        }  # fmt: skip
        plain: dict[str, Any] = msgspec.to_builtins(status)
        return plain

    def _progress(self) -> tuple[int, ...]:
        """What moves the status: spans read, traces pending, each rule's queue and counts."""
        counts = (sum(s.counts.values()) for s in self._states)
        queues = (len(s.queue) for s in self._states)
        pending = len(self.assembler.pending)
        return (self.assembler.spans_read, pending, self._batches, *queues, *counts)

    def _write_status(self) -> None:
        path = self.state / STATUS_NAME
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps(self.status(), option=orjson.OPT_INDENT_2) + b"\n")
        tmp.replace(path)


def _today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


def _may_alert(rule: Rule, source: str) -> bool:
    """Whether the rule's windows may open incidents: ``alert``, and for a judge rule a
    gate-eligible validation record of the same judge."""
    if not rule.alert:
        return False
    if rule.analysis != "judge":
        return True
    if rule.judge_record is None:
        return False
    try:
        record = orjson.loads(Path(rule.judge_record).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the judge record: {exc}", path=source,
                          field="judge_record") from None  # fmt: skip
    if record.get("mode") != "gate_eligible":
        return False
    judge = str(rule.config.get("judge", "lexical"))
    endpoint = record.get("fingerprint", {}).get("endpoint")
    return bool(endpoint == ("builtin:lexical" if judge == "lexical" else judge))
