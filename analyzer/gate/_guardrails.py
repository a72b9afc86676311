"""Layer 2 of the gate: local guardrails as a small rule engine (SPEC 4.5).

Each rule has an action (``block`` / ``warn`` / ``log``) and a time limit. Rules that detect PII,
secrets, prompt injection or a format violation belong to the critical set C: a hit blocks
whatever action the profile gives them (the action cannot lower the floor). A rule that runs out
of time yields a visible ``timeout`` result, never a pass.

Built-in rules:

=================  ==========================================  =========  ========
rule               looks at                                    critical   default
=================  ==========================================  =========  ========
pii                answer (emails, phones, cards, gov. ids)    yes        block
secrets            answer and retrieved context                yes        block
prompt_injection   answer and retrieved context                yes        block
json_validity      answer, when the case expects JSON          yes        block
link_validity      URLs in the answer absent from the context  no         warn
=================  ==========================================  =========  ========
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Final, get_args

from groundtrace.analyzer.cases import Case
from groundtrace.sdk.redaction import Redactor

from ._cases import CaseOutcome, CheckResult, CheckStatus
from ._profile import Action

__all__ = ["ACTIONS", "BUILTIN_RULES", "Rule", "run_guardrails"]

#: Rule actions, from most to least severe.
ACTIONS: Final[tuple[str, ...]] = get_args(Action)
_LAYER = "guardrail"

_PII_MASKERS: Final = ("email", "phone", "credit_card", "us_ssn", "uk_nino", "iban")
_SECRET_MASKERS: Final = (
    "private_key",
    "jwt",
    "bearer_token",
    "openai_key",
    "aws_access_key",
    "github_token",
    "secret",
)
_INJECTION: Final = re.compile(
    r"(?i)\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?"
    r"(?:previous|prior|above|earlier|preceding)\s+(?:instructions|prompts?|rules|context)"
    r"|\b(?:reveal|print|show|repeat)\s+(?:your|the)\s+(?:system\s+)?(?:prompt|instructions)"
    r"|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|unrestricted)\b"
    r"|<\|im_start\|>|<\|system\|>|\[/?INST\]"
    r"|\bnew\s+instructions\s*:"
)
_URL: Final = re.compile(r"https?://[^\s<>\"')\]]+")


@dataclass(frozen=True, slots=True)
class Rule:
    """A guardrail rule: ``check`` returns the offending snippets (empty when clean)."""

    name: str
    check: Callable[[Case, CaseOutcome], list[str] | None]
    critical: bool
    action: str = "block"
    timeout_s: float = 2.0


def _context(outcome: CaseOutcome) -> str:
    return "\n".join(i.content or "" for i in outcome.retrieved or ())


def _masker_hits(text: str, names: tuple[str, ...]) -> list[str]:
    if not text:
        return []
    _, fired = Redactor.builtins(names)(text)
    return sorted(set(fired))


def _pii(case: Case, outcome: CaseOutcome) -> list[str] | None:
    return None if outcome.answer is None else _masker_hits(outcome.answer, _PII_MASKERS)


def _secrets(case: Case, outcome: CaseOutcome) -> list[str] | None:
    hits = [f"answer:{n}" for n in _masker_hits(outcome.answer or "", _SECRET_MASKERS)]
    hits += [f"context:{n}" for n in _masker_hits(_context(outcome), _SECRET_MASKERS)]
    return hits


def _injection(case: Case, outcome: CaseOutcome) -> list[str] | None:
    hits = [f"answer: {m.group(0)}" for m in _INJECTION.finditer(outcome.answer or "")]
    for item in outcome.retrieved or ():
        hits += [
            f"context[{item.id}]: {m.group(0)}" for m in _INJECTION.finditer(item.content or "")
        ]
    return hits


def _json_validity(case: Case, outcome: CaseOutcome) -> list[str] | None:
    if not case.expects_json:
        return []
    if outcome.answer is None:
        return None
    try:
        json.loads(outcome.answer)
    except json.JSONDecodeError as exc:
        return [f"invalid JSON: {exc.msg} at {exc.pos}"]
    return []


def _links(case: Case, outcome: CaseOutcome) -> list[str] | None:
    if outcome.answer is None:
        return None
    context = _context(outcome)
    return [u for u in _URL.findall(outcome.answer) if u.rstrip(".,;") not in context]


#: The built-in rules with their default actions.
BUILTIN_RULES: Final[tuple[Rule, ...]] = (
    Rule("pii", _pii, critical=True),
    Rule("secrets", _secrets, critical=True),
    Rule("prompt_injection", _injection, critical=True),
    Rule("json_validity", _json_validity, critical=True),
    Rule("link_validity", _links, critical=False, action="warn"),
)

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="groundtrace-guardrail")


def _verdict(rule: Rule, hits: list[str] | None) -> CheckResult:
    if hits is None:
        return CheckResult(
            _LAYER, rule.name, CheckStatus.MISSING, rule.critical, detail="no answer"
        )
    if not hits:
        return CheckResult(_LAYER, rule.name, CheckStatus.PASS, rule.critical)
    blocking = rule.critical or rule.action == "block"
    status = CheckStatus.FAIL if blocking or rule.action == "warn" else CheckStatus.NOTED
    return CheckResult(
        _LAYER,
        rule.name,
        status,
        critical=rule.critical,
        blocking=blocking,
        detail=f"{len(hits)} hit(s); action {rule.action}",
        evidence=tuple(hits),
    )


def run_guardrails(
    case: Case,
    outcome: CaseOutcome,
    rules: tuple[Rule, ...] = BUILTIN_RULES,
    actions: Mapping[str, str] | None = None,
) -> list[CheckResult]:
    """Run every rule on one case; ``actions`` overrides rule actions from the profile.

    A ``warn`` hit is a failure (manual review); a ``log`` hit is recorded as ``noted``; a
    critical rule's hit always blocks.
    """
    results: list[CheckResult] = []
    for rule in rules:
        action = (actions or {}).get(rule.name, rule.action)
        if action not in ACTIONS:
            raise ValueError(f"guardrail {rule.name}: unknown action {action!r}")
        effective = Rule(rule.name, rule.check, rule.critical, action, rule.timeout_s)
        future = _POOL.submit(rule.check, case, outcome)
        try:
            hits = future.result(timeout=rule.timeout_s)
        except FutureTimeout:
            results.append(
                CheckResult(
                    _LAYER,
                    rule.name,
                    CheckStatus.TIMEOUT,
                    critical=rule.critical,
                    detail=f"rule exceeded {rule.timeout_s:g}s",
                )
            )
            continue
        results.append(_verdict(effective, hits))
    return results
