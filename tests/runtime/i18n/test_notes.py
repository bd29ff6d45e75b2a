"""Run lines as notes (runtime/i18n/run_messages.py): the English they say, and the JSON the viewer words anew."""

from __future__ import annotations

import json

from cs336_lectures.runtime.i18n.run_messages import Note, count_of, maybe_note, note
from cs336_lectures.runtime.server.retracing import early_summary, run_summary


def test_a_note_says_its_english_and_survives_json():
    line = note("re-ran the whole lecture ({seconds} s): {reason}", seconds="4.10",
                reason=note("class {name} changed (classes are defined at import)", name="Box"))
    assert str(line) == "re-ran the whole lecture (4.10 s): class Box changed (classes are defined at import)"
    assert Note.from_json(json.loads(json.dumps(line.to_json()))) == line
    assert maybe_note(None) is None
    assert (str(count_of(1, "section", "sections")), str(count_of(0, "section", "sections"))) == ("1 section", "0 sections")


def test_the_server_lines_for_each_kind_of_run():
    resumed = {"mode": "incremental", "section": "bpe", "elapsed_s": 0.3141, "sections": 27, "reused": 24}
    assert str(run_summary(resumed)) == "re-ran `bpe` and the 2 sections after it (0.31 s); 24 sections reused"
    last = {**resumed, "reused": 26}
    assert str(run_summary(last)) == "re-ran `bpe` (0.31 s); 26 sections reused"
    whole = {"mode": "full", "elapsed_s": 4.1, "reason": "the imports changed",
             "reason_note": note("the imports changed").to_json()}
    assert str(run_summary(whole)) == "re-ran the whole lecture (4.10 s): the imports changed"
    early = {"section": "bpe", "elapsed_s": 0.12, "sections": 27, "reused": 23}
    assert str(early_summary(early)) == "re-ran `bpe` (0.12 s); running the 3 sections after it…"
    assert str(early_summary({**early, "reused": 26})) == "re-ran `bpe` (0.12 s); finishing…"
