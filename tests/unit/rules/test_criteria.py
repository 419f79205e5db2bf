from hive.rules.criteria import REASON_MAX_CHARS, Judgement, carried_note, judgement_of, notes_of
from hive.rules.reviewer import review_of
from hive.rules.states import ACCEPT, ESCALATE, RELEASED, SENDBACK, STALE, WAIT


def test_met_and_unmet_lines_are_counted_per_criterion() -> None:
    lines = [
        "thinking...",
        "HIVE-CRITERION: 1 met",
        "HIVE-CRITERION: 2 unmet: the file says hello",
    ]
    got = judgement_of(lines, 2)
    assert got == Judgement(criteria=2, judged=2, met=1, unmet=((2, "the file says hello"),))


def test_a_later_line_about_a_criterion_replaces_the_earlier_one() -> None:
    got = judgement_of(["HIVE-CRITERION: 1 unmet: no", "hive-criterion: 1 MET"], 1)
    assert (got.judged, got.met, got.unmet) == (1, 1, ())


def test_numbers_out_of_range_and_malformed_lines_are_unread_not_judged() -> None:
    lines = ["HIVE-CRITERION: 0 met", "HIVE-CRITERION: 3 met", "HIVE-CRITERION: one met"]
    got = judgement_of(lines, 2)
    assert (got.judged, got.met) == (0, 0)
    assert len(got.unread) == 3


def test_an_unmet_line_without_a_reason_gets_one_and_long_reasons_are_cut() -> None:
    got = judgement_of(["HIVE-CRITERION: 1 unmet", f"HIVE-CRITERION: 2 unmet: {'x' * 900}"], 2)
    assert got.unmet[0] == (1, "not met")
    assert len(got.unmet[1][1]) == REASON_MAX_CHARS


def test_the_judgement_feeds_the_reviewer_rule() -> None:
    some = judgement_of(["HIVE-CRITERION: 1 met"], 2)
    assert review_of(2, some.judged, some.met, 1, 0) == WAIT
    unmet = judgement_of(["HIVE-CRITERION: 1 met", "HIVE-CRITERION: 2 unmet: no"], 2)
    assert review_of(2, unmet.judged, unmet.met, 1, 0) == SENDBACK
    met = judgement_of(["HIVE-CRITERION: 1 met", "HIVE-CRITERION: 2 met"], 2)
    assert review_of(2, met.judged, met.met, 1, 0) == ACCEPT


def test_notes_quote_each_unmet_criterion_with_its_reason() -> None:
    got = judgement_of(["HIVE-CRITERION: 2 unmet: says hi", "HIVE-CRITERION: 3 unmet: gone"], 3)
    notes = notes_of(got, ("a", "b"))
    assert notes == "- b: says hi\n- criterion 3: gone"


def _j(lines: list[str], n: int) -> Judgement:
    return judgement_of(lines, n)


def test_decide_gives_each_verdict_its_event_and_note() -> None:
    from hive.rules import states as s
    from hive.rules.criteria import decide, empty_decision

    texts = ("one", "two")
    both = ["HIVE-CRITERION: 1 met", "HIVE-CRITERION: 2 met"]
    unmet = ["HIVE-CRITERION: 1 met", "HIVE-CRITERION: 2 unmet: nope"]
    got = decide(_j(both, 2), texts, 1, 0)
    assert (got.verdict, got.event, got.note) == (s.ACCEPT, s.VERDICT_ACCEPT, "all 2 criteria met")
    got = decide(_j(unmet, 2), texts, 1, 0)
    assert (got.verdict, got.event, got.note) == (s.SENDBACK, s.VERDICT_SENDBACK, "- two: nope")
    got = decide(_j(unmet, 2), texts, 1, 2)
    assert (got.verdict, got.event) == (s.ESCALATE, s.VERDICT_ESCALATE)
    assert got.note == "sent back 2 times and still unmet:\n- two: nope"
    got = decide(_j(both[:1], 2), texts, 1, 0)
    assert (got.verdict, got.event, got.note) == (s.WAIT, s.VERDICT_WAIT, "judged 1 of 2 criteria")
    got = decide(_j(both, 2), texts, 0, 0)
    assert got.verdict == s.ESCALATE and "no file was committed" in got.note
    got = decide(_j([], 0), (), 1, 0)
    assert got.verdict == s.ESCALATE and "no acceptance criteria" in got.note
    assert empty_decision().event == s.VERDICT_EMPTY


def test_only_a_send_back_s_note_is_carried_to_the_next_brief_also_once_released() -> None:
    assert carried_note(SENDBACK, "sendback", " - a: no\n") == "- a: no"
    # a floor's release keeps only a send-back's note
    assert carried_note(RELEASED, "released", "- a: no") == "- a: no"
    assert carried_note(RELEASED, "released", None) == ""
    # an ending with nothing to judge is RELEASED too, with no review of its own
    assert carried_note(RELEASED, None, "- a: no") == ""
    for state, review in ((WAIT, "wait"), (ESCALATE, "escalate")):
        assert carried_note(state, review, "- a: no") == ""


def test_a_persons_note_on_escalated_work_is_carried_once_it_goes_stale() -> None:
    # `hive reject N --note` on escalated work leaves it STALE with the person's note;
    # changed criteria leave a stale order with no note
    assert carried_note(STALE, "stale", " use the new API\n") == "use the new API"
    assert carried_note(STALE, "stale", None) == ""
