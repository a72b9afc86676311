"""What is attributed: the recorded prompt, the evidence sources inside it, the fixed answer.

A source is a span of one message's text (an evidence item, or a sentence of one), with every
other place the same item's text occurs in the prompt (an agent that retrieved it twice).
Ablating a source removes its text wherever it is; the answer is never changed, and only its text is
scored (never the chunk ids an app may cite beside it, which would reveal which chunk was
removed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundtrace.analyzer.errors import ConfigError

__all__ = ["AblationContext", "Mask", "Source", "split_sentences"]

#: Which sources an ablation keeps, one flag per source (True: kept).
Mask = tuple[bool, ...]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True, slots=True)
class Source:
    """One ablatable span: ``messages[message]["content"][start:end]``.

    Attributes:
        id: the evidence id (``"d2"``) or sentence id (``"d2#1"``).
        message: index of the message holding the span.
        start: first character of the span.
        end: one past its last character.
        copies: ``(message, start)`` of each further occurrence of the same text (of the
            same length), removed with it.
    """

    id: str
    message: int
    start: int
    end: int
    copies: tuple[tuple[int, int], ...] = ()

    def spans(self) -> list[tuple[int, int, int]]:
        """``(message, start, end)`` of the span and of each copy."""
        width = self.end - self.start
        return [(self.message, self.start, self.end)] + [(m, a, a + width) for m, a in self.copies]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (split after ``.``, ``!``, ``?``)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _with_copies(
    messages: Sequence[Mapping[str, Any]], sources: list[Source]
) -> tuple[Source, ...]:
    """The sources with every further occurrence of their text that overlaps no source."""
    taken = [(s.message, s.start, s.end) for s in sources]
    out: list[Source] = []
    for source in sources:
        text: str = messages[source.message]["content"][source.start : source.end]
        copies: list[tuple[int, int]] = []
        for m, message in enumerate(messages):
            content: str = message["content"]
            pos = content.find(text)
            while pos >= 0:
                end = pos + len(text)
                if not any(tm == m and pos < te and ts < end for tm, ts, te in taken):
                    copies.append((m, pos))
                    taken.append((m, pos, end))
                pos = content.find(text, pos + 1)
        out.append(Source(source.id, source.message, source.start, source.end, tuple(copies)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class AblationContext:
    """A recorded prompt with its sources located, and the answer to score.

    Attributes:
        messages: the chat messages as the app sent them (string contents).
        sources: the ablatable spans, in prompt order, not overlapping.
        answer: the answer text whose log-probability is scored.
        prefix: what the reply holds before the answer, read but not scored (e.g.
            ``{"answer": "`` for an app that answers in JSON; the fields after the answer,
            such as the cited chunk ids, are never part of the scored text).
    """

    messages: tuple[Mapping[str, Any], ...]
    sources: tuple[Source, ...]
    answer: str
    prefix: str = ""

    @classmethod
    def locate(
        cls,
        messages: Sequence[Mapping[str, Any]],
        texts: Sequence[tuple[str, str]],
        answer: str,
        *,
        prefix: str = "",
    ) -> AblationContext:
        """Find each ``(id, text)`` in the messages, in order, after the previous one, and
        every further occurrence of its text that overlaps no other source (its copies).

        Raises:
            ConfigError: the answer is empty, a message content is not a string, or a
                source text is not in the prompt (the error names the source id).
        """
        if not answer.strip():
            raise ConfigError("the answer to attribute is empty", field="answer")
        for i, message in enumerate(messages):
            if not isinstance(message.get("content"), str):
                raise ConfigError(
                    f"message {i} has no text content to ablate", field=f"messages[{i}].content"
                )
        sources: list[Source] = []
        at_message, at_char = 0, 0
        for source_id, text in texts:
            found = None
            for m in range(at_message, len(messages)):
                content: str = messages[m]["content"]
                pos = content.find(text, at_char if m == at_message else 0) if text else -1
                if pos >= 0:
                    found = Source(source_id, m, pos, pos + len(text))
                    break
            if found is None:
                raise ConfigError(
                    f"source {source_id!r} is not in the recorded prompt (or out of order)",
                    field="sources",
                )
            sources.append(found)
            at_message, at_char = found.message, found.end
        return cls(tuple(messages), _with_copies(messages, sources), answer, prefix)

    @property
    def k(self) -> int:
        """How many sources."""
        return len(self.sources)

    def text(self, index: int) -> str:
        """The text of source ``index``."""
        source = self.sources[index]
        content: str = self.messages[source.message]["content"]
        return content[source.start : source.end]

    def render(self, mask: Sequence[bool]) -> list[dict[str, Any]]:
        """The messages with every source whose flag is False removed."""
        if len(mask) != self.k:
            raise ValueError(f"mask has {len(mask)} flags for {self.k} sources")
        out = [dict(m) for m in self.messages]
        dropped = [span for s, keep in zip(self.sources, mask, strict=True) if not keep
                   for span in s.spans()]  # fmt: skip
        for message, start, end in sorted(dropped, key=lambda span: (span[0], -span[1])):
            content = out[message]["content"]
            out[message]["content"] = content[:start] + content[end:]
        return out

    def split(self) -> tuple[AblationContext, list[list[int]]]:
        """The same prompt whose sources are the sentences of every source, and the groups:
        for each original source, the indices of its sentences."""
        sources: list[Source] = []
        groups: list[list[int]] = []
        for index in range(self.k):
            part = self.sentences(index).sources
            groups.append(list(range(len(sources), len(sources) + len(part))))
            sources.extend(part)
        return AblationContext(self.messages, tuple(sources), self.answer, self.prefix), groups

    def sentences(self, index: int) -> AblationContext:
        """The same prompt whose sources are the sentences of source ``index``."""
        source = self.sources[index]
        text = self.text(index)
        spans = split_sentences(text)
        return AblationContext(
            self.messages,
            tuple(
                Source(
                    f"{source.id}#{n}",
                    source.message,
                    source.start + a,
                    source.start + b,
                    tuple((m, at + a) for m, at in source.copies),
                )
                for n, (a, b) in enumerate(spans)
            ),
            self.answer,
            self.prefix,
        )
