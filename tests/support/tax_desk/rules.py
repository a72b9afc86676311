"""The tax desk's knowledge base and questions (ids as gold)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["QUESTIONS", "RULES", "search"]

#: rule id -> (title, text): one page a rule.
RULES: Final[dict[str, tuple[str, str]]] = {
    "vat-threshold": (
        "VAT registration",
        "Freelancers must register for VAT once their turnover passes 85,000 crowns in any "
        "twelve months.",
    ),
    "mileage-rate": (
        "Mileage",
        "Business travel by private car is deductible at 0.42 crowns per kilometre driven.",
    ),
    "home-office": (
        "Home office",
        "A home office room is deductible only when it is used for work alone.",
    ),
    "filing-deadline": (
        "Filing deadline",
        "The annual return of a freelancer is due on the last day of July after the tax year.",
    ),
    "late-penalty": (
        "Late returns",
        "A late annual return costs a penalty of 5 percent of the tax due.",
    ),
    "receipts-keep": (
        "Keeping records",
        "Keep receipts and invoices for seven years after the end of the tax year.",
    ),
    "meal-allowance": (
        "Meals",
        "Meals on business trips longer than eight hours are covered at 14 crowns a day.",
    ),
}

#: case id -> (question, gold rule id, reference answer)
QUESTIONS: Final[dict[str, tuple[str, str, str]]] = {
    "q-vat": ("When must a freelancer register for VAT?", "vat-threshold", "85,000 crowns"),
    "q-mileage": (
        "How much is deductible per kilometre of business travel by private car?",
        "mileage-rate",
        "0.42 crowns",
    ),
    "q-deadline": (
        "When is the annual return of a freelancer due?",
        "filing-deadline",
        "the last day of July",
    ),
    "q-receipts": (
        "How long must I keep receipts and invoices?",
        "receipts-keep",
        "seven years",
    ),
}

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and the of for is are be to in on at by my i how when what must".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def search(query: str, k: int = 3) -> list[dict[str, object]]:
    """The ``k`` rules sharing the most words with ``query`` (ties: page order)."""
    score = {i: len(_words(query) & _words(text)) for i, (_, text) in RULES.items()}
    ranked = sorted(RULES, key=lambda i: -score[i])[:k]
    return [
        {"id": i, "title": RULES[i][0], "content": RULES[i][1], "score": float(score[i])}
        for i in ranked
    ]
