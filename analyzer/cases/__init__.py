"""Cases: one model and one reader for every analysis (gate, judge, paths, interventions).

A case file is JSON lines (or one JSON array) of rows in the case model's own layout, the
fields of :class:`Case` (with the aliases ``id``, ``answer``, ``gold_support_titles``,
``required_context``, ``distractors`` and ``candidates``), or in a dataset's layout, told
apart row by row:

* HotpotQA: ``_id, question, answer, supporting_facts, context``;
* 2WikiMultihopQA: the same plus ``evidences``;
* tau-bench results: ``task_id, trial, info.task.actions`` (case id ``<task_id>:<trial>``);
* tau2-bench tasks: ``id, evaluation_criteria.actions``;
* BFCL: ``id, question, function``, with the ground truth of ``possible_answer/``;
* BFCL multi-turn: ``id, question`` (a list of turns, each a list of messages),
  ``involved_classes`` (``initial_config`` and ``path`` are kept in ``metadata``), with the
  ground truth of ``possible_answer/``: one list of call strings per turn
  (``"cd(folder='document')"``), read into :attr:`Case.turns`; positional arguments are
  named by the function docs of ``multi_turn_func_doc/`` beside the file, as BFCL ships it;
* judge items: ``question`` (or ``query``), ``context`` (or ``contexts``, ``evidence``: a
  string or a list of strings) and the ``answer`` (or ``response``) to judge.

Every error names the file, the line and the field.

Usage::

    from groundtrace.analyzer.cases import read_cases

    for case in read_cases("cases.jsonl"):
        print(case.case_id, case.reference_answer, case.support_titles)
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._model import STRATA, Case, Passage, RequiredCall, Turn, normalise_resource
from ._read import parse_case, read_cases

__all__ = [
    "STRATA",
    "Case",
    "Passage",
    "RequiredCall",
    "Turn",
    "normalise_resource",
    "parse_case",
    "read_cases",
]

#: Parts of :class:`Case` and the layout table, no longer public (0.2.0): importable from here
#: for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {
        "ExpectedSource": f"{__name__}._model.ExpectedSource",
        "LAYOUTS": f"{__name__}._layouts.LAYOUTS",
        "SupportingFact": f"{__name__}._model.SupportingFact",
        "ToolSpec": f"{__name__}._model.ToolSpec",
    },
    since="0.2.0",
    remove_in="0.3.0",
)
