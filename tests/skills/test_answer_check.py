import math

import pytest

from skills.answer_check import check_answer, normalise_text


@pytest.mark.parametrize(
    ("got", "expected", "tolerance", "passed"),
    [
        (9.9382, 9.9372, 0.001, True),  # exactly at the tolerance (float noise absorbed)
        (9.9362, 9.9372, 0.001, True),
        (9.93821, 9.9372, 0.001, False),  # just beyond
        (9.9372, 9.9372, 0.0, True),
        (9.93721, 9.9372, 0.0, False),
        (40, 40, None, True),
        (40.0, 40, None, True),  # same number, float or int
        (41, 40, None, False),
        (9.93720001, 9.9372, None, False),  # null tolerance: exact
        (-2.0, -2.0, 0.0005, True),
        (2.0, -2.0, 0.0005, False),  # the sign matters
    ],
)
def test_numbers_within_the_absolute_tolerance(got, expected, tolerance, passed):
    assert check_answer(got, expected, tolerance).passed is passed


def test_nan_infinity_and_missing_answers_never_pass():
    assert not check_answer(math.nan, 1.0, 10.0).passed
    assert not check_answer(math.inf, 1.0, math.inf).passed
    assert check_answer(None, 1.0, 0.1).reason == "no answer"


def test_text_that_is_a_number_passes_but_a_number_in_prose_does_not():
    assert check_answer("9.9372", 9.9372, 0.001).passed
    assert check_answer(" 9.9372 eV ", 9.9372, 0.001, unit="eV").passed
    assert check_answer("1e1", 10, None).passed
    prose = check_answer("The atomization energy is 9.9372 eV", 9.9372, 0.001, unit="eV")
    assert not prose.passed and "inside prose" in prose.reason
    assert not check_answer("9.9372 kJ/mol", 9.9372, 0.001, unit="eV").passed  # another unit is not ours
    assert "expected a number" in check_answer("high", 9.9, 0.1).reason


def test_booleans_match_booleans_or_the_words_only():
    assert check_answer(True, True, None).passed
    assert check_answer("False", False, None).passed
    assert not check_answer(1, True, None).passed
    assert not check_answer(True, 1, None).passed
    assert not check_answer(0, False, None).passed


def test_lists_element_wise_with_the_tolerance():
    assert check_answer([2, 2], [2, 2], None).passed
    assert check_answer("[2, 2]", [2, 2], None).passed
    assert check_answer([1.0004, 2.0], [1.0, 2.0], 0.001).passed
    item = check_answer([1.0, 2.1], [1.0, 2.0], 0.001)
    assert not item.passed and item.reason.startswith("item 1:")
    assert "got 3 items, expected 2" == check_answer([1, 2, 3], [1, 2], None).reason
    assert check_answer({"a": 1.0001}, {"a": 1.0}, 0.001).passed
    assert not check_answer({"a": 1.0, "b": 2}, {"a": 1.0}, 0.001).passed


@pytest.mark.parametrize(
    ("got", "expected", "passed"),
    [
        ("Cubic.", "cubic", True),  # plain word: case and trailing period ignored
        ("'ZnO'", "ZnO", True),  # surrounding quotes dropped
        ("  Oc1ccccc1 ", "Oc1ccccc1", True),
        ("nacl", "NaCl", False),  # formulas are case-sensitive
        ("CO", "Co", False),  # element symbol vs molecule
        ("fm-3m", "Fm-3m", False),  # space-group symbols are exact
        ("Fm-3m", "Fm-3m", True),
        ("Na Cl", "NaCl", False),
    ],
)
def test_strings_are_normalised_sensibly(got, expected, passed):
    assert check_answer(got, expected, None).passed is passed


def test_normalise_text_collapses_whitespace_and_keeps_decimal_points():
    assert normalise_text("  a \n  b. ") == "a b"
    assert normalise_text("3.") == "3."
