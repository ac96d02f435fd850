"""The toolbox: typed calls, errors that teach, switches that remove tools."""

from deployments.settings import get_settings
from tasks.intent import recognise_intent, retrieve_tools
from tasks.tools.registry import TOOLS, ToolBox, ToolCall, available_tools


def test_every_tool_has_a_description_and_a_json_schema():
    names = {t.name for t in TOOLS}
    assert {"search", "extract_code_from_url", "retrieve_extracted_code", "quick_introspect", "runtime_probe_snippet", "parse_local_package",
            "query_knowledge_graph", "check_installed_packages", "check_package_version", "install_dependencies", "execute_shell_command",
            "create_and_execute_script", "read_file", "save_to_memory", "search_memory"} <= names  # fmt: skip
    for tool in TOOLS:
        assert tool.description, tool.name
        schema = tool.arguments_model().model_json_schema()
        assert not {"settings", "store", "cache", "knowledge", "user"} & set(schema.get("properties", {})), tool.name


def test_errors_remind_of_correct_use_and_suggest_the_next_tool(workspace):
    box = ToolBox(get_settings())
    wrong_args = box.call("query_knowledge_graph", package="spglib")
    assert not wrong_args.ok and "Use: query_knowledge_graph(package: str, query: str)" in wrong_args.error
    unparsed = box.call("query_knowledge_graph", package="spglib_not_a_package", query="find x")
    assert not unparsed.ok and "call parse_local_package('spglib_not_a_package') first" in unparsed.error
    unknown = box.run(ToolCall(name="browse", arguments={}))
    assert not unknown.ok and "search" in unknown.error
    version = box.call("check_package_version", name="typing.extensions")
    assert version.ok and version.value.name == "typing_extensions"
    missing = box.call("check_package_version", name="pymatgn")
    assert not missing.ok and "pymatgen" in missing.error and "check_installed_packages" in missing.error
    assert [c.ok for c in box.calls] == [False, False, False, True, False]


def test_nsr_and_ncl_remove_their_tools(workspace):
    base = get_settings()
    nsr = {t.name for t in available_tools(base.model_copy(update={"self_reflection": False}))}
    ncl = {t.name for t in available_tools(base.model_copy(update={"continuous_learning": False}))}
    assert "quick_introspect" not in nsr and "parse_local_package" not in nsr and "search" in nsr
    assert "search" not in ncl and "extract_code_from_url" not in ncl and "search_memory" not in ncl and "quick_introspect" in ncl
    box = ToolBox(base.model_copy(update={"continuous_learning": False}))
    assert "no tool 'search' here" in box.call("search", query="eos").error


def test_intent_and_tool_retrieval_keep_the_context_small(workspace):
    assert recognise_intent("Molecular weight of aspirin from its SMILES with RDKit").model_dump() == {
        "domain": "molecules", "task_type": "compute", "packages": ["rdkit"]}  # fmt: skip
    assert recognise_intent("Build the Li-O phase diagram from these entries; energy above hull of Li2O2?").domain == "thermodynamics"
    settings = get_settings()
    tools = retrieve_tools("AttributeError: 'Structure' object has no attribute 'lattice_vectors'", "debug", settings, k=4)
    assert len(tools) == 4 and tools[0].name == "runtime_probe_snippet"
    assert all(t.meta != "memory" for t in tools)
    assert len(ToolBox(settings).describe([t.name for t in tools]).splitlines()) == 4
