"""Sources located in a recorded prompt, removed by a mask, split into sentences."""

from __future__ import annotations

import pytest

from groundtrace.analyzer.attribution import AblationContext
from groundtrace.analyzer.attribution._context import split_sentences
from groundtrace.analyzer.errors import ConfigError

MESSAGES = [
    {"role": "system", "content": "Answer from the evidence."},
    {"role": "user", "content": "[a] Paris is in France. It is big.\n[b] Rome is old.\nQ?"},
]
TEXTS = [("a", "Paris is in France. It is big."), ("b", "Rome is old.")]


def test_a_mask_removes_exactly_the_dropped_sources() -> None:
    context = AblationContext.locate(MESSAGES, TEXTS, "Paris.")
    assert context.k == 2 and context.text(1) == "Rome is old."
    assert context.render((True, True)) == MESSAGES
    assert context.render((False, True))[1]["content"] == "[a] \n[b] Rome is old.\nQ?"
    assert context.render((False, False))[1]["content"] == "[a] \n[b] \nQ?"
    assert context.render((True, True))[0] == MESSAGES[0]
    with pytest.raises(ValueError, match="3 flags for 2 sources"):
        context.render((True, True, True))


def test_sentences_of_a_source_are_its_sub_sources() -> None:
    context = AblationContext.locate(MESSAGES, TEXTS, "Paris.").sentences(0)
    assert [s.id for s in context.sources] == ["a#0", "a#1"]
    assert [context.text(i) for i in range(2)] == ["Paris is in France.", "It is big."]
    assert context.render((True, False))[1]["content"].startswith("[a] Paris is in France. \n")
    assert split_sentences("One. Two!  Three?") == [(0, 4), (5, 9), (11, 17)]


def test_a_source_missing_from_the_prompt_is_named() -> None:
    with pytest.raises(ConfigError, match="'b' is not in the recorded prompt"):
        AblationContext.locate(MESSAGES, [("a", "Paris"), ("b", "Berlin")], "x")
    with pytest.raises(ConfigError, match="answer to attribute is empty"):
        AblationContext.locate(MESSAGES, TEXTS, "  ")
    with pytest.raises(ConfigError, match="out of order"):
        AblationContext.locate(MESSAGES, list(reversed(TEXTS)), "x")


def test_split_makes_every_sentence_a_source_grouped_by_item() -> None:
    context, groups = AblationContext.locate(MESSAGES, TEXTS, "Paris.").split()
    assert [s.id for s in context.sources] == ["a#0", "a#1", "b#0"]
    assert groups == [[0, 1], [2]]
    assert context.render((False, False, True))[1]["content"] == "[a]  \n[b] Rome is old.\nQ?"


def test_a_source_shown_twice_is_removed_wherever_it_is() -> None:
    """An agent that retrieved the same item twice has its text in two tool messages:
    removing the item removes both copies (else 'without it' still shows it once), and its
    sentences are removed in both."""
    agent = [
        {"role": "user", "content": "Where is Paris?"},
        {"role": "tool", "content": "[a] Paris is in France. It is big.\n[b] Rome is old."},
        {"role": "tool", "content": "[a] Paris is in France. It is big."},
    ]
    context = AblationContext.locate(agent, TEXTS, "France.")
    assert context.k == 2
    without_a = context.render((False, True))
    assert "Paris is in" not in without_a[1]["content"] + without_a[2]["content"]
    assert without_a[1]["content"] == "[a] \n[b] Rome is old." and without_a[2]["content"] == "[a] "
    assert context.render((True, False))[2] == agent[2]
    split, groups = context.split()
    assert groups == [[0, 1], [2]]
    only_second = split.render((True, False, True))
    assert only_second[1]["content"].startswith("[a] Paris is in France. \n")
    assert only_second[2]["content"] == "[a] Paris is in France. "
