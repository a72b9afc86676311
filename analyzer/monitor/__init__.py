"""Online evaluation: rules run on a sample of live traces, exactly once, with windows and alerts.

A rules file (:func:`load_rules`, ``docs/monitor.md``) names which analysis runs on which
traces (service, app version, attributes, case ids), on what share of them (chosen by a hash
of the trace id: the same traces online, in a backfill and after a restart) and at what cost.
:class:`Monitor` follows a receiver's folder (``follow``) or reads stored traces
(``backfill``), evaluates each rule's complete sampled traces in batches through the one
driver, journals every (rule, fingerprint, trace) outcome once, writes the verdicts back,
keeps rolling windows per app version and opens an incident (a webhook POST) when a window
fails more often than its baseline. Traces groundtrace produced itself (replays, marked
``groundtrace.origin`` or ``groundtrace.replay.of``) are never sampled.

Usage (in a notebook, an async service or any coroutine: the library starts no event loop)::

    from groundtrace.analyzer.monitor import Monitor, load_rules

    with Monitor(load_rules("rules.toml"), "monitor/") as monitor:
        status = await monitor.backfill(["traces/"])  # or: await monitor.follow(folder, stop=event)
    print(status["rules"]["grounded"]["counts"])  # {'evaluated_backfill': ...}

From the shell: ``groundtrace monitor run --rules rules.toml --state monitor/ --traces traces/
--port 4319`` (``docs/monitor.md``).
"""

from __future__ import annotations

from ._monitor import Monitor, Outcome
from ._rules import Rule, Rules, load_rules

__all__ = ["Monitor", "Outcome", "Rule", "Rules", "load_rules"]
