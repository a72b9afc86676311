"""Incidents and recoveries, said once: to stdout, to ``alerts.jsonl`` and to a webhook.

Each change is POSTed as JSON to the webhook (its ``text`` field reads as a Slack message; the
rest is the incident's numbers) and appended to ``alerts.jsonl`` with whether it was delivered.
After a restart the windows are rebuilt from the journal, which replays the same changes:
those already in ``alerts.jsonl`` are not sent again; one the monitor was killed before sending
is sent then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson

from ._windows import Change

__all__ = ["Alerts", "alert_text"]

#: Delivery attempts per change, and the seconds before each retry.
ATTEMPTS = 3
BACKOFF = 0.5
TIMEOUT = 5.0


def alert_text(change: Change) -> str:
    """The change in one line: rule, versions, window against baseline, probability."""
    w, b = change.window, change.baseline
    versions = ", ".join(f"{v} {x.failed}/{x.n}" for v, x in change.versions.items())
    head = (f"INCIDENT {change.incident}" if change.state == "incident"
            else f"RECOVERED from incident {change.incident}")  # fmt: skip
    return (
        f"groundtrace monitor: {head} on rule {change.rule}: window {w.failed}/{w.n} failed "
        f"(versions: {versions}) vs baseline {b.failed}/{b.n}; "
        f"P(worse) = {change.probability:.3f}; traces {change.first_trace}..{change.last_trace}"
    )


class Alerts:
    """Where the changes go.

    Args:
        path: the ``alerts.jsonl`` file.
        webhook: the URL POSTed to (None: no webhook).
        say: the line printer.
    """

    def __init__(self, path: Path, webhook: str | None, say: Callable[[str], None]) -> None:
        self.path = path
        self.webhook = webhook
        self.say = say
        self._sent: set[tuple[str, int, str]] = set()
        self._delivered = 0
        self._undelivered = 0
        if path.exists():
            for line in path.read_bytes().splitlines():
                try:
                    row = orjson.loads(line)
                    self._sent.add((row["rule"], int(row["incident"]), row["state"]))
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                    continue  # a torn last line of a killed run: that change is sent again

    def replayed(self, change: Change) -> None:
        """A change the journal's replay made: sent only if it never was."""
        if (change.rule, change.incident, change.state) not in self._sent:
            self.send(change)

    def send(self, change: Change) -> None:
        """Say the change, POST it to the webhook, and append it to ``alerts.jsonl``."""
        text = alert_text(change)
        self.say(text)
        payload = {"text": text, **orjson.loads(msgspec.json.encode(change))}
        delivered = self._post(payload) if self.webhook is not None else None
        row = {**payload, "delivered": delivered, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                        time.gmtime())}  # fmt: skip
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as f:
            f.write(orjson.dumps(row) + b"\n")
        self._sent.add((change.rule, change.incident, change.state))

    def _post(self, payload: dict[str, Any]) -> bool:
        import httpx

        error = ""
        for attempt in range(ATTEMPTS):
            try:
                reply = httpx.post(str(self.webhook), json=payload, timeout=TIMEOUT)
            except httpx.HTTPError as exc:
                error = type(exc).__name__
            else:
                if reply.status_code < 300:
                    self._delivered += 1
                    return True
                error = f"HTTP {reply.status_code}"
            if attempt + 1 < ATTEMPTS:
                time.sleep(BACKOFF * 2**attempt)
        self._undelivered += 1
        self.say(f"alert not delivered to the webhook after {ATTEMPTS} attempts ({error})")
        return False

    def summary(self) -> dict[str, int]:
        """Changes sent, delivered and not delivered."""
        return {"sent": len(self._sent), "delivered": self._delivered,
                "undelivered": self._undelivered}  # fmt: skip
