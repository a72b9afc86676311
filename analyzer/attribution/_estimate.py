"""``--estimate``: the model passes the traces still to attribute would take, made nowhere.

Each pass is one scoring of the fixed answer under one ablation, shown to the driver's
estimate as one model request (the ablated prompt, the reply's prefix and the answer as the
assistant turn: its characters / 4 are the tokens evaluated). The passes of a trace, by
method, for ``k`` evidence items (``n`` sentences for ``hierarchical``), the empty context
(the context gap) included:

* ``leave-one-out``: ``k + 1`` and the empty context (``k + 1`` when ``k = 1``);
* ``shapley``: ``2**k`` (the empty context among them);
* ``contextcite``: ``n_ablations`` random masks, the full prompt and the empty context (the
  same masks the run draws: the seed fixes them);
* ``hierarchical``: the full prompt, one ablation per item and the empty context now; then
  up to ``max_passes - k - 1`` sentence ablations that depend on those scores (the
  estimate's ``dependent`` calls).

A trace the run's journal holds makes no pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ._context import AblationContext, Mask
from ._methods import random_masks

if TYPE_CHECKING:
    from groundtrace.analyzer.executor import UnitJournal
    from groundtrace.analyzer.llm import ChatRequest

    from ._shape import Config, Unit

__all__ = ["estimate", "passes"]


def _model(config: Config) -> str:
    if config.endpoint is not None:
        return config.endpoint_model
    if config.model_path is not None:
        return Path(config.model_path).name
    from groundtrace.analyzer.backends import DEFAULT_MODEL

    return DEFAULT_MODEL


def passes(context: AblationContext, config: Config) -> tuple[list[Mask], int]:
    """The ablations the run scores for ``context`` that do not depend on any score (in the
    order asked, repeats removed), and how many more at most depend on their scores."""
    k = context.k
    full, empty = (True,) * k, (False,) * k
    dependent = 0
    if config.method == "leave-one-out":
        masks = [full, *(tuple(j != i for j in range(k)) for i in range(k)), empty]
    elif config.method == "shapley":
        masks = [tuple(bool(bits >> j & 1) for j in range(k)) for bits in range(2**k)]
    elif config.method == "contextcite":
        masks = [full, *random_masks(k, config.n_ablations, config.seed), empty]
    else:
        split, groups = context.split()
        n = split.k
        drop = [tuple(j not in set(g) for j in range(n)) for g in groups]
        masks = [(True,) * n, *drop, (False,) * n]
        dependent = max(0, config.max_passes - 1 - len(groups))
        dependent = min(dependent, 2**n - len(set(masks)))  # at most every other mask
    return list(dict.fromkeys(masks)), dependent


def estimate(
    units: Sequence[Unit], config: Config, journal: UnitJournal | None
) -> tuple[list[ChatRequest], int, int]:
    """The passes of the units the journal does not hold, as model requests; how many units
    it holds; the passes at most that depend on scores not made yet."""
    from groundtrace.analyzer.llm import ChatRequest

    if config.replay is not None:
        from groundtrace.analyzer.errors import ConfigError

        raise ConfigError(  # as the interventions' function replay: the app makes its calls
            "--estimate: the behavioural tier (--replay) replays the app, whose own model "
            "calls are not known ahead (k + 1 replays a trace)",
            field="replay",
        )
    model = _model(config)
    out_tokens = 1 if config.endpoint is not None else 0  # a completion generates one token
    requests: list[ChatRequest] = []
    done = dependent = 0
    for unit in units:
        entry = None if journal is None else journal.entry(unit.trace_id)
        if entry is not None and entry.ok:
            done += 1
            continue
        context = unit.context.split()[0] if config.method == "hierarchical" else unit.context
        masks, later = passes(unit.context, config)
        dependent += later
        reply = {"role": "assistant", "content": context.prefix + context.answer}
        for mask in masks:
            messages = (*context.render(mask), reply)
            requests.append(ChatRequest(model=model, messages=messages, max_tokens=out_tokens))
    return requests, done, dependent
