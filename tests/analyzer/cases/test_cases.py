"""The one case model and its reader: every layout, the aliases, and precise errors.

The dataset rows below are real rows, trimmed to a few fields or paragraphs with their text
unchanged: 2WikiMultihopQA dev (Apache-2.0), tau-bench gpt-4o airline trajectories and
tau2-bench airline tasks (sierra-research, MIT), BFCL v4 (ShishirPatil/gorilla, Apache-2.0).
HotpotQA rows come from the example's shipped sample (CC BY-SA 4.0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from groundtrace.analyzer.cases import Case, Passage, RequiredCall, parse_case, read_cases
from groundtrace.analyzer.cases._model import ExpectedSource, SupportingFact
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.interventions._plan import _cases
from groundtrace.analyzer.judge import JudgeCase
from groundtrace.analyzer.judge._gold import load_cases
from groundtrace.analyzer.paths._tau import AIRLINE_WRITE_TOOLS, tau_bench_cases

HOTPOT_SAMPLE = (
    Path(__file__).resolve().parents[3]
    / "examples"
    / "hotpot_rag"
    / "data"
    / "hotpotqa_dev_distractor_200.jsonl"
)

#: 2WikiMultihopQA dev, line 40 (two of its ten paragraphs).
TWOWIKI = {
    "_id": "bc096c180bdb11eba7f7acde48001122",
    "type": "compositional",
    "question": "What is the date of birth of Marie Jeanne Baptiste Of Savoy-Nemours's husband?",
    "context": [
        [
            "Charles Emmanuel II, Duke of Savoy",
            [
                "Charles Emmanuel II ; 20 June 1634 \u2013 12 June 1675) was the Duke of Savoy "
                "from 1638 to 1675 and under regency of his mother Christine of France until "
                "1648.",
                "He was also Marquis of Saluzzo, Count of Aosta, Geneva, Moriana and Nice, as well "
                "as claimant king of Cyprus, Jerusalem and Armenia.",
                "At his death in 1675 his second wife Marie Jeanne Baptiste of Savoy-Nemours "
                "acted as Regent for their nine-year-old son.",
            ],
        ],
        [
            "Marie Jeanne Baptiste of Savoy-Nemours",
            [
                "Marie Jeanne Baptiste of Savoy-Nemours (11 April 1644 \u2013 15 March 1724) was "
                "born a Princess of Savoy and became the Duchess of Savoy by marriage.",
                "First married by proxy to Charles of Lorraine in 1662, Lorraine soon refused to "
                "recognise the union and it was annulled.",
                "She married Charles Emmanuel II, Duke of Savoy in 1665 who was her kinsman.",
            ],
        ],
    ],
    "entity_ids": "Q33188_Q355755",
    "supporting_facts": [
        ["Marie Jeanne Baptiste of Savoy-Nemours", 2],
        ["Charles Emmanuel II, Duke of Savoy", 0],
    ],
    "evidences": [
        ["Marie Jeanne Baptiste of Savoy-Nemours", "spouse", "Charles Emmanuel II"],
        ["Charles Emmanuel II", "date of birth", "20 June 1634"],
    ],
    "answer": "20 June 1634",
    "evidences_id": [
        ["Q33188", "spouse", "Q355755"],
        ["Q355755", "date of birth", "date_information"],
    ],
    "answer_id": None,
}

#: tau-bench gpt-4o airline, task 6 trial 0 (trajectory and reward_info left out).
TAU = {
    "task_id": 6,
    "reward": 1.0,
    "info": {
        "task": {
            "user_id": "aarav_garcia_1177",
            "actions": [
                {
                    "name": "update_reservation_flights",
                    "kwargs": {
                        "reservation_id": "M05KNL",
                        "cabin": "economy",
                        "flights": [
                            {"flight_number": "HAT110", "date": "2024-05-24"},
                            {"flight_number": "HAT172", "date": "2024-05-24"},
                        ],
                        "payment_id": "gift_card_8887175",
                    },
                }
            ],
            "instruction": "You are aarav_garcia_1177. For your upcoming trip from ATL to PHL, "
            "you want to change for the cheapest economy flight and for the day after the "
            "original reservation. You are happy with original payment for refund.",
            "outputs": [],
        },
        "source": "user",
    },
    "trial": 0,
}

#: tau2-bench airline task 3 (description and scenario trimmed to what is read).
TAU2 = {
    "id": "3",
    "user_scenario": {
        "persona": None,
        "instructions": {
            "domain": "airline",
            "reason_for_call": "You want to figure out the total number of suitcases the "
            "reservation allows you to take on your upcoming flight.",
        },
    },
    "initial_state": None,
    "evaluation_criteria": {
        "actions": [
            {
                "action_id": "3_0",
                "name": "get_reservation_details",
                "arguments": {"reservation_id": "JMO1MG"},
                "info": None,
            },
            {
                "action_id": "3_1",
                "name": "get_user_details",
                "arguments": {"user_id": "anya_garcia_5901"},
                "info": None,
            },
        ],
        "communicate_info": ["4"],
        "nl_assertions": ["Agent detects that user is actually a Silver member."],
        "reward_basis": ["DB", "COMMUNICATE"],
    },
    "annotations": None,
}

#: BFCL v4 parallel_0 and its possible_answer row.
BFCL = {
    "id": "parallel_0",
    "question": [
        [
            {
                "role": "user",
                "content": "Play songs from the artists Taylor Swift and Maroon 5, with a play "
                "time of 20 minutes and 15 minutes respectively, on Spotify.",
            }
        ]
    ],
    "function": [
        {
            "name": "spotify.play",
            "description": "Play specific tracks from a given artist for a specific time duration.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "artist": {
                        "type": "string",
                        "description": "The artist whose songs you want to play.",
                    },
                    "duration": {
                        "type": "integer",
                        "description": "The duration for which the songs should be played, "
                        "in minutes.",
                    },
                },
                "required": ["artist", "duration"],
            },
        }
    ],
}
BFCL_TRUTH = {
    "id": "parallel_0",
    "ground_truth": [
        {"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}},
        {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}},
    ],
}


def write(path: Path, *rows: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def roundtrip(case: Case) -> Case:
    return parse_case(msgspec.json.decode(msgspec.json.encode(case)))


def test_hotpotqa_rows_keep_their_sentences_and_spaces() -> None:
    rows = [json.loads(line) for line in HOTPOT_SAMPLE.read_text(encoding="utf-8").splitlines()]
    cases = list(read_cases(HOTPOT_SAMPLE))
    assert len(cases) == len(rows) == 200
    for row, case in zip(rows[:20], cases[:20], strict=True):
        assert case.case_id == row["_id"] and case.reference_answer == row["answer"]
        assert case.question == row["question"]
        assert case.metadata == {"type": row["type"], "level": row["level"]}
        assert case.supporting_facts == tuple(
            SupportingFact(t, s) for t, s in row["supporting_facts"]
        )
        assert case.support_titles == tuple(dict.fromkeys(t for t, _ in row["supporting_facts"]))
        for i, (passage, (title, sentences)) in enumerate(zip(case.passages, row["context"])):
            # HotpotQA sentences carry their own leading spaces: joined as they are
            assert passage == Passage(
                f"{row['_id']}:{i}", title, "".join(sentences), tuple(sentences)
            )
    assert roundtrip(cases[0]) == cases[0]


def test_2wikimultihopqa_sentences_are_joined_with_a_space(tmp_path: Path) -> None:
    (case,) = read_cases(write(tmp_path / "2wiki.jsonl", TWOWIKI))
    first = case.passages[0]
    assert "Armenia.At" not in first.text
    assert first.text == (
        "Charles Emmanuel II ; 20 June 1634 \u2013 12 June 1675) was the Duke of Savoy from "
        "1638 to 1675 and under regency of his mother Christine of France until 1648. He was "
        "also Marquis of Saluzzo, Count of Aosta, Geneva, Moriana and Nice, as well as claimant "
        "king of Cyprus, Jerusalem and Armenia. At his death in 1675 his second wife Marie "
        "Jeanne Baptiste of Savoy-Nemours acted as Regent for their nine-year-old son."
    )
    assert first.id == f"{TWOWIKI['_id']}:0" and len(first.sentences) == 3
    assert case.reference_answer == "20 June 1634"
    assert case.support_titles == (
        "Marie Jeanne Baptiste of Savoy-Nemours",
        "Charles Emmanuel II, Duke of Savoy",
    )
    assert case.evidences[1] == ("Charles Emmanuel II", "date of birth", "20 June 1634")
    assert set(case.metadata) == {"type", "entity_ids", "evidences_id", "answer_id"}
    assert roundtrip(case) == case


def test_tau_bench_row_becomes_exact_required_calls(tmp_path: Path) -> None:
    (case,) = read_cases(write(tmp_path / "tau.jsonl", TAU))
    assert case.case_id == "6:0"
    assert case.question is not None and case.question.startswith("You are aarav_garcia_1177.")
    (call,) = case.required_calls
    assert call.name == "update_reservation_flights"
    assert call.arguments["cabin"] == ["economy"]
    # nested objects are constraints that take exactly their values
    assert call.arguments["flights"] == [
        [
            {"flight_number": ["HAT110"], "date": ["2024-05-24"]},
            {"flight_number": ["HAT172"], "date": ["2024-05-24"]},
        ]
    ]
    assert case.required_values == () and case.metadata == {"reward": 1.0}
    assert roundtrip(case) == case


def test_tau2_bench_tasks_in_a_json_array(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([TAU2], indent=4), encoding="utf-8")
    (case,) = read_cases(path)
    assert case.case_id == "3"
    assert case.question is not None and case.question.startswith("You want to figure out")
    assert case.required_calls == (
        RequiredCall("get_reservation_details", {"reservation_id": ["JMO1MG"]}),
        RequiredCall("get_user_details", {"user_id": ["anya_garcia_5901"]}),
    )
    assert case.required_values == ("4",)
    assert set(case.metadata) == {"user_scenario", "initial_state", "annotations"}
    bad = {**TAU2, "id": "4", "evaluation_criteria": {"actions": [{"name": 3}]}}
    text = json.dumps([TAU2, bad], indent=4)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        list(read_cases(path))
    # an array item is named by the line it starts on
    starts = [n for n, line in enumerate(text.splitlines(), start=1) if line == "    {"]
    assert info.value.line == starts[1] == 44
    assert info.value.field == "evaluation_criteria.actions[0].name"


def test_bfcl_questions_take_their_possible_answer_twin(tmp_path: Path) -> None:
    questions = write(tmp_path / "BFCL_v4_parallel.jsonl", BFCL)
    write(tmp_path / "possible_answer" / "BFCL_v4_parallel.jsonl", BFCL_TRUTH)
    (case,) = read_cases(questions)
    assert case.case_id == "parallel_0"
    assert case.question is not None and case.question.startswith("Play songs from")
    assert case.required_calls == (
        RequiredCall("spotify.play", {"artist": ["Taylor Swift"], "duration": [20]}),
        RequiredCall("spotify.play", {"artist": ["Maroon 5"], "duration": [15]}),
    )
    (tool,) = case.tools
    assert tool.name == "spotify.play" and tool.parameters["required"] == ["artist", "duration"]
    other = write(tmp_path / "truth.jsonl", {"id": "parallel_0", "ground_truth": [{"a": 1}]})
    with pytest.raises(InputError) as info:
        list(read_cases(questions, ground_truth=other))
    assert (info.value.path, info.value.line, info.value.field) == (
        str(other),
        1,
        "ground_truth[0]",
    )
    missing = write(tmp_path / "none.jsonl", {"id": "parallel_9", "ground_truth": []})
    with pytest.raises(InputError, match="no ground truth for 'parallel_0'") as info:
        list(read_cases(questions, ground_truth=missing))
    assert info.value.line == 1 and info.value.field == "id"


def test_the_case_models_own_layout_and_its_aliases() -> None:
    case = parse_case(
        {
            "id": 7,
            "answer": "Tulsa",
            "gold_support_titles": ["Tinted Windows (band)"],
            "distractors": [{"id": 3, "title": "T", "content": "text"}],
            "expected_sources": ["policy.md", {"source": "faq.md", "version": 2}],
            "required_reads": ["./docs//a.md"],
            "stratum": "critical",
            "type": "bridge",
            "level": "hard",
        }
    )
    assert case.case_id == "7" and case.reference_answer == "Tulsa"
    assert case.support_titles == ("Tinted Windows (band)",)
    assert case.passages == (Passage("3", "T", "text"),)
    assert case.expected_sources == (ExpectedSource("policy.md"), ExpectedSource("faq.md", "2"))
    assert case.required_reads == ("docs/a.md",)
    assert case.critical is True  # the critical stratum, unless said otherwise
    assert case.metadata == {"type": "bridge", "level": "hard"}
    assert roundtrip(case) == case
    gate = parse_case({"case_id": "g", "required_context": ["d1"], "stratum": "critical",
                       "critical": False})  # fmt: skip
    assert gate.support_titles == ("d1",) and gate.critical is False
    # the gate's curated drafts read back, their provenance kept
    draft = {"case_id": "t", "question": "q", "reference_answer": None, "required_context": [],
             "reference_origin": "observed answer (review before use)",
             "source_trace_id": "abc", "app_version": None}  # fmt: skip
    assert parse_case(draft).metadata == {
        "reference_origin": "observed answer (review before use)",
        "source_trace_id": "abc",
        "app_version": None,
    }


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"question": "q"}, "id", "non-empty id"),
        ({"id": ""}, "id", "non-empty id"),
        ({"id": "a", "case_id": "b"}, "case_id", "name the same field"),
        ({"id": "a", "gold_support_titles": "t"}, "gold_support_titles", "Expected `array`"),
        ({"id": "a", "candidates": [{"title": "t"}]}, "candidates[0].id", "missing required"),
        ({"id": "a", "stratum": "urgent"}, "stratum", "unknown stratum"),
        ({"id": "a", "requried_reads": []}, "requried_reads", "unknown field"),
        ({**TWOWIKI, "context": [["t", "not a list"]]}, "context[0][1]", "2wikimultihopqa"),
        ({k: v for k, v in TWOWIKI.items() if k != "answer"}, "answer", "missing required"),
        ({**TAU, "info": {"task": {}}}, "info.task.actions", "tau-bench"),
        ({**TAU2, "evaluation_criteria": {"actions": [{}]}},
         "evaluation_criteria.actions[0].name", "tau2-bench"),
        ({**BFCL, "function": [{"description": "x"}]}, "function[0].name", "bfcl"),
        # a case field in a dataset row is refused, not kept unread in metadata
        ({"id": "a", "context": "c", "answer": "a", "required_reads": []}, "required_reads",
         "read as a judge row"),
        ({**TAU, "stratum": "critical"}, "stratum", "read as a tau-bench row"),
    ],
)  # fmt: skip
def test_bad_rows_name_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str, message: str
) -> None:
    path = write(tmp_path / "cases.jsonl", "# a comment", {"id": "ok"}, row)
    with pytest.raises(InputError, match=message) as info:
        list(read_cases(path))
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 3, field)
    assert f"{path}:3 [{field}]" in str(info.value)


def test_bad_lines_and_repeated_ids_fail_with_their_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="invalid JSON") as info:
        list(read_cases(write(tmp_path / "j.jsonl", {"id": "a"}, "{nope")))
    assert info.value.line == 2
    with pytest.raises(InputError, match=r"duplicate case id '6:0' \(first on line 1\)") as info:
        list(read_cases(write(tmp_path / "d.jsonl", TAU, TAU)))
    assert info.value.line == 2
    with pytest.raises(InputError, match="a case must be a JSON object") as info:
        list(read_cases(write(tmp_path / "s.jsonl", {"id": "a"}, "[1]")))
    assert info.value.line == 2
    with pytest.raises(InputError, match="cannot read case file"):
        list(read_cases(tmp_path / "absent.jsonl"))


def test_tau_bench_cases_keep_only_the_write_actions(tmp_path: Path) -> None:
    (run,) = tau_bench_cases(write(tmp_path / "tau.jsonl", TAU))
    assert [c.name for c in run.required_calls] == ["update_reservation_flights"]
    assert run.exclusive_tools == AIRLINE_WRITE_TOOLS
    (task,) = tau_bench_cases(write(tmp_path / "tau2.jsonl", TAU2))
    assert task.required_calls == () and task.required_values == ("4",)  # lookups are free


def test_interventions_join_gold_and_pool_candidates(tmp_path: Path) -> None:
    hotpot = json.loads(HOTPOT_SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    cases = write(
        tmp_path / "cases.jsonl",
        {"case_id": hotpot["_id"], "reference_answer": "Tulsa", "gold_support_titles": ["A"]},
        {"case_id": "own", "distractors": [{"id": "d", "title": "D", "text": "kept"}]},
    )
    pool = write(tmp_path / "pool.jsonl", hotpot, {**TWOWIKI, "_id": "own"})
    joined = _cases(cases, pool)
    gold = joined[hotpot["_id"]]
    assert (gold.reference_answer, gold.support_titles) == ("Tulsa", ("A",))
    assert [p.id for p in gold.passages] == [f"{hotpot['_id']}:{i}" for i in range(10)]
    # a case's own distractors win over the pool's paragraphs
    assert joined["own"].passages == (Passage("d", "D", "kept"),)
    # the pool alone brings candidates, never gold
    alone = _cases(None, pool)[hotpot["_id"]]
    assert alone.reference_answer is None and alone.support_titles == ()
    assert alone.passages == gold.passages


#: HaluEval QA (MIT), as carried by the groundedness gold set: a judge item with its label.
HALUEVAL = {
    "id": "halueval-qa-494-hallucinated",
    "source": "HaluEval QA (generation/qa/qa_one-turn_data.json)",
    "question": "Which 20th Century Fox film cast Zazie Beetz as Domino?",
    "context": ' In 2016, she also appeared in the Netflix anthology series "Easy".Deadpool 2 is '
    "an upcoming American superhero film based on the Marvel Comics character Deadpool, "
    "distributed by 20th Century Fox.",
    "answer": 'Zazie Beetz starred in a Marvel film for 20th Century Fox called "Dark Phoenix".',
    "supported": False,
}


def test_judge_items_carry_the_answer_to_judge(tmp_path: Path) -> None:
    case = parse_case(HALUEVAL)
    assert case.response == HALUEVAL["answer"] and case.reference_answer is None
    assert case.passages == (Passage(f"{HALUEVAL['id']}:0", text=HALUEVAL["context"]),)
    assert case.metadata == {"source": HALUEVAL["source"], "supported": False}
    assert roundtrip(case) == case
    other = {"query": "q", "contexts": ["a", "b"], "response": "r"}
    judged = load_cases(write(tmp_path / "judge.jsonl", HALUEVAL, other))
    assert judged[0].context == (HALUEVAL["context"],)
    assert judged[1] == JudgeCase("line-2", "q", ("a", "b"), "r")  # no id: named by its line
    path = write(tmp_path / "cases.jsonl", HALUEVAL, {"id": "x", "question": "q", "answer": "a"})
    with pytest.raises(InputError, match="no context to judge") as info:
        load_cases(path)
    assert info.value.field == "context"
