"""Write per-case results back to where the traces live (``--write-back otlp|phoenix``).

Every analysis that judges traces -- the gate, ``paths``, ``judge run``, ``interventions``
-- can send its per-case results back to the backend, linked to the original trace and span:

* ``otlp``: one OTel GenAI ``gen_ai.evaluation.result`` log record per result, exported over
  OTLP/HTTP to ``--otlp-endpoint``, on the span it evaluates (the root span for a gate
  decision or path status, the answering LLM call for a judge score, with its
  ``gen_ai.response.id``, the retrieval step for an evidence role);
* ``phoenix``: one Arize Phoenix annotation per result through its REST API, where Phoenix
  shows it: a trace annotation for a per-request result (gate, paths, judge), a document
  annotation under the retrieved document for an evidence role; short names, keyed so that a
  rerun updates them instead of adding duplicates.

A label-only result (gate decision, path status, evidence roles) also carries a score by one
rule (1.0 passes, 0.0 fails, 0.5 between, none without a verdict), so a backend charts it;
an evidence role carries its document (id and position among the span's documents), which
a read-back keeps.

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

from ._build import gate_verdicts, judge_verdicts, path_verdicts, role_verdicts
from ._otlp import export_otlp, log_record
from ._phoenix import annotate_phoenix, phoenix_annotation, phoenix_name
from ._verdict import Linked, Target, Verdict, answer_spans, root_spans

__all__ = [
    "Linked",
    "Target",
    "Verdict",
    "annotate_phoenix",
    "answer_spans",
    "export_otlp",
    "gate_verdicts",
    "judge_verdicts",
    "log_record",
    "path_verdicts",
    "phoenix_annotation",
    "phoenix_name",
    "role_verdicts",
    "root_spans",
]
