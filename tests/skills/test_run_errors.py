"""A skill run that fails on one of its parameter values is explained in words; other failures keep their raw error."""

from deployments.settings import get_settings
from skills.run_errors import explain_run_error
from skills.runner import run_skill_code
from tests.codes import N2_SKILL

BULK_SKILL = 'from ase.build import bulk\n\ndef run(symbol: str = "Cu") -> int:\n    return len(bulk(symbol))\n'


def test_an_unknown_molecule_run_in_the_sandbox_is_a_sentence_naming_the_parameter(workspace):
    execution = run_skill_code(N2_SKILL, ["ase"], {"formula": "Xe2", "fmax": 0.01}, get_settings(), "unknown-molecule")
    assert not execution.ok and "KeyError: 'Xe2'" in execution.error  # the raw error stays as it was
    assert explain_run_error(execution.stderr, {"formula": "Xe2", "fmax": 0.01}) == (
        "The skill could not use formula='Xe2': ase.build.molecule() has no entry for 'Xe2'."
    )


def test_a_value_error_that_names_the_value_says_who_refused_it(workspace):
    execution = run_skill_code(BULK_SKILL, ["ase"], {"symbol": "Xq"}, get_settings(), "unknown-element")
    sentence = explain_run_error(execution.stderr, {"symbol": "Xq"})
    assert sentence is not None and sentence.startswith("The skill could not use symbol='Xq': ase.build.bulk() refused it (")
    assert "Xq" in sentence.split("refused it", 1)[1]  # the library's own words follow


def test_other_failures_are_not_explained():
    crash = 'Traceback (most recent call last):\n  File "skill.py", line 1, in run\nValueError: scripted failure\n'
    assert explain_run_error(crash, {"formula": "N2"}) is None  # a message that names no parameter's value
    assert explain_run_error("KeyError: 'energy'", {"formula": "N2"}) is None  # a key that is no parameter's value
    assert explain_run_error("killed after the 60 s wall-clock limit", {"formula": "N2"}) is None
