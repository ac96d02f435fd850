"""Replies that echo the stage's JSON schema are re-asked, never returned (the tiny embedded model does this)."""

import pytest

from deployments.llm.client import LLMClient
from deployments.llm.replies import ECHO_PROBLEM, echoes_schema
from deployments.llm.transport import LLMSchemaError, ScriptedTransport
from deployments.packages import module_names
from deployments.settings import Settings
from tasks.research import CodeReply
from tasks.triage import TriageReply

VALID = {"packages": ["ase"], "code": "from ase.build import molecule\nprint(1)"}

ECHOES = {
    "field schemas as values": {
        "packages": {"type": "array", "items": {"type": "string"}, "description": "Top-level packages the script imports."},
        "code": {"type": "string", "description": "The complete Python script."},
    },
    "schema words as packages": {"packages": ["items", "type", "description"], "code": "print(1)"},
    "the whole schema": CodeReply.model_json_schema(),
    "descriptions as values": {"packages": ["Top-level packages the script imports."], "code": "The complete Python script."},
    "type names as values": {"packages": ["string"], "code": "string"},
    "the schema's properties": {"properties": CodeReply.model_json_schema()["properties"], "code": "print(1)"},
}


def client(replies, **settings):
    return LLMClient(ScriptedTransport(replies), Settings(**settings))


@pytest.mark.parametrize("echo", ECHOES.values(), ids=ECHOES.keys())
def test_an_echo_is_reasked_and_recorded_as_a_failed_call(echo):
    llm = client([{"stage": "research", "content": echo}, {"stage": "research", "content": VALID}], llm_schema_retries=1)
    assert llm.structured("research", "sys", "user", CodeReply) == CodeReply(**VALID)
    assert [(c.ok, c.error) for c in llm.calls] == [(False, ECHO_PROBLEM), (True, None)]
    reask = llm.transport.received[1][1][-1]["content"]
    assert reask == f"That reply was not valid: {ECHO_PROBLEM}. Reply again with only the JSON object."


def test_an_echo_that_validates_is_not_taken():
    # Every TriageReply field has a default: its schema itself validates as "nothing to clarify".
    echo = TriageReply.model_json_schema()
    assert TriageReply.model_validate(echo) == TriageReply()
    llm = client([{"stage": "triage", "content": echo}, {"stage": "triage", "content": {"conflict": "", "question": ""}}])
    assert llm.structured("triage", "sys", "user", TriageReply) == TriageReply()
    assert [c.ok for c in llm.calls] == [False, True]


def test_echo_inside_prose_is_recognised():
    text = 'Sure! ```json\n{"packages": ["items", "type", "description"], "code": "print(1)"}\n```'
    llm = client([{"stage": "s", "text": text}], llm_schema_retries=0)
    with pytest.raises(LLMSchemaError, match="after 1 tries \\(the reply echoed the schema instead of filling it\\)"):
        llm.structured("s", "sys", "user", CodeReply)


@pytest.mark.parametrize(
    "reply",
    [
        {"packages": ["numpy"], "code": "x = {'type': 'array', 'items': []}\nprint(type(x), 'description', 'string')"},
        {"packages": [], "code": "print('string')"},
        {"packages": ["numpy", "ase"], "code": "print(1)", "note": "type"},
    ],
)
def test_a_legitimate_reply_mentioning_schema_words_is_accepted_first_time(reply):
    llm = client([{"stage": "research", "content": reply}], llm_schema_retries=0)
    assert llm.structured("research", "sys", "user", CodeReply).code == reply["code"]
    assert [c.ok for c in llm.calls] == [True]


def test_fields_named_like_schema_keywords_are_filled_legitimately():
    from skills.compile import SkillDraft

    draft = {"name": "atomization", "description": "The atomization energy of a molecule with EMT.", "code": "def run(): ..."}
    assert not echoes_schema(draft, SkillDraft.model_json_schema())
    echoed = {"name": "string", "description": "one sentence: what it computes, from which inputs", "code": "def run(): ..."}
    assert echoes_schema(echoed, SkillDraft.model_json_schema())


def test_an_allowed_value_equal_to_a_type_name_is_no_echo():
    schema = {"title": "Spec", "type": "object", "properties": {"kind": {"enum": ["string", "float"], "type": "string"}}}
    assert not echoes_schema({"kind": "string"}, schema)
    assert echoes_schema({"kind": "string", "type": "object"}, schema)


def test_schema_words_are_never_package_names():
    assert module_names(["items", "type", "description", "properties", "string", "object", "numpy", "ase.build"]) == ["ase", "numpy"]
    solution = CodeReply(packages=["items", "type", "description"], code="import numpy\nprint(1)").to_solution()
    assert solution.packages == ["numpy"]


# A bind schema as the bind stage builds it: params_model(skill.parameters, optional=True), parameters from run()'s signature.
SKILL_CODE = '''
def run(energy: float = -3.2, volume: float = 11.5, columns: list = ["energy"], type: str = "fcc", dtype: str = "float") -> dict:
    """Tabulate an equation of state.

    columns: which quantities to tabulate
    type: the lattice type
    """
    return {}
'''


def bind_model():
    from skills.params import params_model, signature_schema

    return params_model(signature_schema(SKILL_CODE), optional=True)


@pytest.mark.parametrize(
    "reply",
    [
        {"columns": ["energy", "volume"]},
        {"energy": None, "volume": None, "columns": ["energy", "volume", "type"], "type": None, "dtype": None},
        {"dtype": "string"},
        {"type": "string"},
        {"energy": -3.1, "volume": 12.0, "columns": ["energy", "volume"], "type": "string"},
    ],
    ids=["other parameter names", "parameter names with nulls", "dtype string", "parameter named type", "a full reply"],
)
def test_a_bind_reply_naming_parameters_or_types_is_accepted_first_time(reply):
    llm = client([{"stage": "bind", "content": reply}], llm_schema_retries=0)
    bound = llm.structured("bind", "sys", "user", bind_model())
    assert {k: v for k, v in bound.model_dump().items() if v is not None} == {k: v for k, v in reply.items() if v is not None}
    assert [c.ok for c in llm.calls] == [True]


@pytest.mark.parametrize(
    "echo",
    [
        {"columns": ["anyOf", "items", "type"], "energy": 1.0},
        {"type": "string", "dtype": "string"},
        {"type": "string", "columns": ["string"]},
    ],
)
def test_a_bind_echo_is_still_detected(echo):
    schema = bind_model().model_json_schema()
    assert echoes_schema(schema, schema)
    assert echoes_schema(echo, schema)


@pytest.mark.parametrize("packages", [["string"], ["enum", "string"]])
def test_stdlib_modules_named_like_schema_words_are_accepted_first_time(packages):
    reply = {"packages": packages, "code": "import enum\nimport string\nprint(string.ascii_lowercase, enum.Enum)"}
    llm = client([{"stage": "research", "content": reply}], llm_schema_retries=0)
    assert llm.structured("research", "sys", "user", CodeReply) == CodeReply(**reply)
    assert [c.ok for c in llm.calls] == [True]


@pytest.mark.parametrize("question", ["Do you mean the Python type 'string' or the word?", ""])
def test_a_triage_conflict_that_is_a_type_name_is_accepted_first_time(question):
    reply = {"conflict": "string", "question": question}
    llm = client([{"stage": "triage", "content": reply}], llm_schema_retries=0)
    assert llm.structured("triage", "sys", "user", TriageReply) == TriageReply(**reply)
    assert [c.ok for c in llm.calls] == [True]


def test_a_reply_made_only_of_type_names_is_an_echo():
    schema = CodeReply.model_json_schema()
    assert echoes_schema({"packages": ["string"], "code": "string"}, schema)
    assert echoes_schema({"code": "string"}, schema)  # its only filled field is a required one
    assert not echoes_schema({"packages": ["string"], "code": "import string"}, schema)
