"""What a skill was verified on: each rule refuses with its reason, the same rule for binding and for every door; a
question's silence is binding's alone (a door's left-out parameters take their verified defaults, shown with the answer)."""

import pytest

from skills.binding import BindingDeclined, bind
from skills.documents import Provenance, Skill, TestCase
from skills.domain import OutsideDomain, checked_params, domain_problems
from skills.params import ParameterError
from tests.codes import N2_QUERY
from tests.skills.test_binding import N2, NACL, ROCKSALT, ROCKSALT_CODE, ROCKSALT_QUERY, lifted, rocksalt

HIDDEN = lifted(ROCKSALT_CODE, ROCKSALT_QUERY, keep=("crystal",), hidden=["5.64 in Lattice.cubic(argument 1)"])


def _skill(**properties: dict) -> Skill:
    return Skill(
        name="kinds", code="def run(**kw):\n    return 1.0\n", parameters={"type": "object", "properties": properties},
        test_case=TestCase(params={k: v["default"] for k, v in properties.items()}, expected=1.0), provenance=Provenance(query="q"),
    )  # fmt: skip


KINDS = _skill(
    metal={"type": "string", "default": "Cu", "kind": "element"},
    smiles={"type": "string", "default": "CCO", "kind": "smiles"},
    repeats={"type": "integer", "default": 2, "minimum": 1, "maximum": 4},
    formula={"type": "string", "default": "NaCl", "kind": "formula", "derives": "elements"},
)

ENTRIES = _skill(
    energies={"type": "array", "default": [["Li", 0.0], ["O2", 0.0], ["Li2O", -6.0]], "kind": "entries"},
    formula={"type": "string", "default": "Li2O", "kind": "formula"},
)


@pytest.mark.parametrize(
    ("skill", "given", "reason"),
    [
        (N2, {"formula": "CO"}, "the skill uses the elements of formula by position, verified on N2; CO has another make-up"),
        (KINDS, {"formula": "CaF2"}, "the skill uses the elements of formula by position, verified on NaCl; CaF2 has another make-up"),
        (KINDS, {"formula": "hello"}, "'hello' is not a formula, and formula takes one"),
        (ROCKSALT, {"crystal": rocksalt("Na", "Xx")}, "crystal: 'Xx' is not an element symbol"),
        (ROCKSALT, {"crystal": {**NACL, "coords": [[0, 0, 0]]}}, "crystal: a crystal lists as many sites (coords) as species, at least one"),
        (ROCKSALT, {"crystal": {**NACL, "coords": [[0, 0, 0], [0.5, 0.5, 2.5]]}}, "crystal: each site's coords are three fractional coordinates between -1 and 1"),
        (ROCKSALT, {"crystal": {**NACL, "space_group": "Fm-3x"}}, "crystal: 'Fm-3x' is not a space-group symbol"),
        (ROCKSALT, {"crystal": {"species": ["Na"]}}, "crystal: a crystal is a mapping of space_group, species, coords"),
        (ROCKSALT, {"a": 0.0}, "a must be above 0 (got 0.0)"),
        (HIDDEN, {"crystal": rocksalt("K", "Cl")}, "the skill also uses 5.64 in Lattice.cubic(argument 1), which no parameter sets and which may belong to Na, Cl in Fm-3m, not K, Cl in Fm-3m"),
        (KINDS, {"metal": "Xx"}, "'Xx' is not an element symbol, and metal takes one"),
        (KINDS, {"smiles": "C1CC"}, "'C1CC' is not a SMILES RDKit can read, and smiles takes one"),
        (KINDS, {"repeats": 2.5}, "repeats takes a whole number (got 2.5)"),
        (KINDS, {"repeats": 5}, "repeats must be at most 4 (got 5)"),
        (ENTRIES, {"energies": [["Li", 0.0]]}, "energies takes a list of at least two [formula, number] entries"),
        (ENTRIES, {"energies": [["Li", 0.0], ["O2", "low"]]}, "energies takes a list of at least two [formula, number] entries (['O2', 'low'] is not a formula and a number)"),
        (ENTRIES, {"energies": [["Li", 0.0], ["Li", -1.0]], "formula": "Li"}, "energies lists a formula twice"),
        (ENTRIES, {"energies": [["Na", 0.0], ["F2", 0.0], ["NaF", -6.0]]}, "formula=Li2O is not one of the entries of energies, and the skill was verified on one of them"),
    ],
)
def test_each_rule_refuses_with_its_reason(skill, given, reason):
    assert domain_problems(skill, given) == [reason]


@pytest.mark.parametrize(
    ("skill", "given"),
    [(N2, {"formula": "O2"}), (N2, {}), (ROCKSALT, {"crystal": rocksalt("K", "Cl"), "a": 6.29}), (ROCKSALT, {"crystal": rocksalt("K", "Cl"), "a": 5.64}),
     (KINDS, {"formula": "ClNa"}), (ROCKSALT, {"a": 5.7}), (HIDDEN, {"crystal": NACL}), (KINDS, {"metal": "Ag", "smiles": "c1ccccc1", "repeats": 3}),
     (ENTRIES, {"energies": [["Na", 0.0], ["F2", 0.0], ["NaF", -6.0]], "formula": "NaF"})],
)  # fmt: skip
def test_values_inside_the_domain_pass(skill, given):
    assert domain_problems(skill, given) == []


@pytest.mark.parametrize(
    ("skill", "query", "given"),
    [
        (N2, N2_QUERY.replace("a nitrogen molecule", "CO"), {"formula": "CO"}),
        (ROCKSALT, ROCKSALT_QUERY.replace("5.64", "0"), {"a": 0.0}),
        (HIDDEN, ROCKSALT_QUERY.replace("NaCl", "KCl"), {"crystal": rocksalt("K", "Cl")}),
    ],
)
def test_binding_declines_by_the_same_rule_and_reason_as_the_doors_refuse(skill, query, given):
    with pytest.raises(BindingDeclined) as declined:
        bind(skill, query)
    assert [str(declined.value)] == domain_problems(skill, given, unset="the question does not state")


def test_a_question_that_leaves_out_a_number_of_another_substance_declines_where_a_door_takes_the_default():
    query = ROCKSALT_QUERY.replace("rock-salt NaCl with a cubic lattice constant of 5.64 Å", "rock-salt KCl")
    with pytest.raises(BindingDeclined, match="the question does not state a for K, Cl in Fm-3m; the verified 5.64 belongs to Na, Cl in Fm-3m"):
        bind(ROCKSALT, query)
    assert checked_params(ROCKSALT, {"crystal": rocksalt("K", "Cl")}) == {"a": 5.64, "crystal": rocksalt("K", "Cl")}


def test_checked_params_fill_the_defaults_inside_and_refuse_in_one_line_outside():
    assert checked_params(ROCKSALT, {"crystal": rocksalt("K", "Cl"), "a": "6.29"}) == {"a": 6.29, "crystal": rocksalt("K", "Cl")}
    assert checked_params(N2, {}) == {"formula": "N2"}
    with pytest.raises(OutsideDomain) as refused:
        checked_params(N2, {"formula": "CO"})
    message = str(refused.value)
    assert isinstance(refused.value, ParameterError) and "\n" not in message
    assert message == "lifted-v1 was not verified for formula=CO: the skill uses the elements of formula by position, verified on N2; CO has another make-up"
    with pytest.raises(ParameterError) as wrong_type:  # the schema first: a value of the wrong type is not a domain question
        checked_params(ROCKSALT, {"a": "fast"})
    assert not isinstance(wrong_type.value, OutsideDomain)


# -- what mutation testing of skills/domain.py found untested (each a guard that could let a wrong answer through) ----------


def test_bounds_hold_at_their_edges():
    from skills.domain import value_problem
    from skills.parameter import Parameter

    below = Parameter(type="number", default=1.0, exclusiveMaximum=2.0)
    assert value_problem("x", below, 1.999) is None
    assert value_problem("x", below, 2.0) == "x must be below 2.0 (got 2.0)"
    assert value_problem("x", below, 3.0) == "x must be below 2.0 (got 3.0)"
    at_most = Parameter(type="number", default=1.0, maximum=2.0)
    assert value_problem("x", at_most, 2.0) is None and value_problem("x", at_most, 2.5) == "x must be at most 2.0 (got 2.5)"
    above = Parameter(type="number", default=1.0, exclusiveMinimum=0.0, minimum=0.5)
    assert value_problem("x", above, 0.5) is None and value_problem("x", above, 0.4) == "x must be at least 0.5 (got 0.4)"


def test_a_formula_written_another_way_is_the_same_substance_and_a_kind_is_read_from_the_default_where_unrecorded():
    from skills.domain import changed_substances, parameter_kind
    from skills.parameter import Parameter

    properties = {"formula": Parameter(type="string", default="NaCl", kind="formula"), "smiles": Parameter(type="string", default="OCC", kind="smiles")}
    assert changed_substances(properties, {"formula": "ClNa", "smiles": "CCO"}) == []
    assert changed_substances(properties, {"formula": "KCl", "smiles": "CCN"}) == ["formula", "smiles"]
    kinds = {d: parameter_kind(Parameter(type="string", default=d)) for d in ("Cu", "Fe2O3", "c1ccccc1", "N#N", "fcc", "BCC", "HELLO")}
    assert kinds == {"Cu": "element", "Fe2O3": "formula", "c1ccccc1": "smiles", "N#N": "smiles", "fcc": "word", "BCC": "word", "HELLO": "word"}


def test_a_second_list_of_entries_is_checked_after_a_first_one_refused_on_its_own():
    two = _skill(
        first={"type": "array", "default": [["Li", 0.0], ["O2", 0.0], ["Li2O", -6.0]], "kind": "entries"},
        second={"type": "array", "default": [["Na", 0.0], ["F2", 0.0], ["NaF", -6.0]], "kind": "entries"},
        formula={"type": "string", "default": "NaF", "kind": "formula"},
    )
    problems = domain_problems(two, {"first": [["Li", 0.0]], "second": [["K", 0.0], ["F2", 0.0], ["KF", -5.0]]})
    assert problems[0].startswith("first takes a list of at least two")
    assert problems[1] == "formula=NaF is not one of the entries of second, and the skill was verified on one of them"
