"""Write per-case results back to where the traces live (``--write-back otlp|phoenix``).

Every analysis that judges traces -- the gate, ``paths``, ``judge run``, ``interventions``
-- can send its per-case results back to the backend, linked to the original trace and span:

* ``otlp``: one OTel GenAI ``gen_ai.evaluation.result`` log record per result, exported over
  OTLP/HTTP to ``--otlp-endpoint`` (the record's trace and span ids are the original's);
* ``phoenix``: one Arize Phoenix span annotation per result through its REST API, keyed by
  an identifier so a rerun updates them instead of adding duplicates.

The results files are written first; a failed write-back is a :class:`WriteBackError`
(exit code 4), never ignored.

Usage::

    from groundtrace.analyzer.writeback import Verdict, annotate_phoenix, export_otlp

    verdicts = [Verdict(trace_id, span_id, "groundtrace.gate.case", label="block")]
    export_otlp(verdicts, "http://127.0.0.1:4318")
    annotate_phoenix(verdicts, "http://127.0.0.1:6006")
"""

from __future__ import annotations

from ._build import gate_verdicts, judge_verdicts, path_verdicts, role_verdicts
from ._otlp import export_otlp, log_record
from ._phoenix import annotate_phoenix, phoenix_annotation
from ._verdict import Linked, Verdict, root_spans

__all__ = [
    "Linked",
    "Verdict",
    "annotate_phoenix",
    "export_otlp",
    "gate_verdicts",
    "judge_verdicts",
    "log_record",
    "path_verdicts",
    "phoenix_annotation",
    "role_verdicts",
    "root_spans",
]
