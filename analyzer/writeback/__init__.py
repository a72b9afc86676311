"""Write per-case results back to where the traces live (``--write-back otlp|phoenix``).

Every analysis that judges traces -- the gate, ``paths``, ``judge run``, ``interventions``
-- builds its per-case results as :class:`Verdict` items (the ``verdicts`` hook of its
shape), and write-back sends them to the backend, linked to the original trace and span.
Write-back knows no analysis: a plugin's verdicts go the same way.

* ``otlp``: one OTel GenAI ``gen_ai.evaluation.result`` log record per result, exported over
  OTLP/HTTP to ``--otlp-endpoint``, on the span it evaluates (the root span for a gate
  decision or path status, the answering LLM call for a judge score, with its
  ``gen_ai.response.id``, the retrieval step for an evidence role);
* ``phoenix``: one Arize Phoenix annotation per result through its REST API, where Phoenix
  shows it: a trace annotation for a per-request result (gate, paths, judge), a document
  annotation under the retrieved document for an evidence role; short names, keyed so that a
  rerun updates them instead of adding duplicates.

A label-only result (gate decision, path status, evidence roles) also carries a score on one
scale (:attr:`Verdict.PASSED` 1.0, :attr:`Verdict.BETWEEN` 0.5, :attr:`Verdict.FAILED` 0.0,
none without a verdict), so a backend charts it; an evidence role carries its document (id
and position among the span's documents), which a read-back keeps.

The results files are written first; a failed write-back is a :class:`WriteBackError`
(exit code 4), never ignored.

Usage::

    from groundtrace.analyzer.writeback import Verdict, export_otlp

    verdicts = [Verdict(trace_id, span_id, "groundtrace.gate.case", label="block")]
    export_otlp(verdicts, "http://127.0.0.1:4318")  # e.g. to `groundtrace collect serve`

and to Arize Phoenix (through its REST API)::

    from groundtrace.analyzer.writeback import annotate_phoenix

    annotate_phoenix(verdicts, "http://127.0.0.1:6006")
"""

from __future__ import annotations

from groundtrace.analyzer._deprecation import renamed

from ._otlp import export_otlp
from ._phoenix import annotate_phoenix
from ._verdict import Linked, Target, Verdict, answer_spans, root_spans

__all__ = [
    "Linked",
    "Target",
    "Verdict",
    "annotate_phoenix",
    "answer_spans",
    "export_otlp",
    "root_spans",
]

#: Names no longer public: each analysis builds its own verdicts (its ``verdicts`` hook), and
#: a backend's record of one verdict is the sender's business.
__getattr__ = renamed(
    __name__,
    {
        "gate_verdicts": "groundtrace.analyzer.gate._verdicts.gate_verdicts",
        "judge_verdicts": "groundtrace.analyzer.judge._verdicts.judge_verdicts",
        "path_verdicts": "groundtrace.analyzer.paths._verdicts.path_verdicts",
        "role_verdicts": "groundtrace.analyzer.interventions._verdicts.role_verdicts",
        "log_record": "groundtrace.analyzer.writeback._otlp.log_record",
        "phoenix_annotation": "groundtrace.analyzer.writeback._phoenix.phoenix_annotation",
        "phoenix_name": "groundtrace.analyzer.writeback._phoenix.phoenix_name",
    },
    since="0.2.0",
    remove_in="0.3.0",
)
