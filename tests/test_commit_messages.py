"""The commit-message rule ``make lint`` applies (tests/commit_messages.py)."""

from __future__ import annotations

from tests.commit_messages import MAX_SUBJECT, problems


def test_a_short_subject_with_a_body_after_a_blank_line_passes():
    assert problems("Shoe: a label phones write is read\n\nWhy: NDEF TLV.\n") == []
    assert problems("One line\n") == []


def test_a_long_subject_is_refused_with_its_length():
    found = problems("x" * (MAX_SUBJECT + 1))
    assert len(found) == 1 and f"{MAX_SUBJECT + 1} characters" in found[0]
    assert problems("x" * MAX_SUBJECT) == []


def test_a_body_glued_to_the_subject_is_refused():
    assert problems("Subject\nbody at once\n") == [
        "no blank line between the subject and the body"]


def test_an_empty_subject_is_refused():
    assert problems("\n\nbody\n") == ["an empty subject"]
