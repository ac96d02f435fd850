"""The package knowledge graph: parsed from installed sources, cached, bounded; queried."""

import pytest

from deployments.settings import get_settings
from skills.store import open_cache
from tasks.tools.errors import ToolError
from tasks.tools.graph_query import query_knowledge_graph
from tasks.tools.package_graph import load_modules, parse_local_package, parse_module


@pytest.fixture
def cache(workspace):
    return open_cache(get_settings())


def test_pymatgen_graph_answers_the_questions_an_agent_asks(cache):
    graph = parse_local_package("pymatgen", cache, budget_s=600)
    assert graph.complete and graph.files_parsed == graph.files_total > 300 and graph.version
    owners = query_knowledge_graph("pymatgen", "which classes define get_space_group_number", cache).results
    assert owners == ["pymatgen.symmetry.analyzer.SpacegroupAnalyzer"]
    signature = query_knowledge_graph("pymatgen", "signature of InterfacialReactivity", cache).results
    assert signature[0].startswith("pymatgen.analysis.interface_reactions.InterfacialReactivity(c1: Composition, c2: Composition, pd: PhaseDiagram")
    subclasses = query_knowledge_graph("pymatgen", "subclasses of IStructure", cache).results
    assert {"pymatgen.core.structure.Structure", "pymatgen.core.surface.Slab"} <= set(subclasses)  # Slab derives from Structure
    misspelt = query_knowledge_graph("pymatgen", "signature of get_space_grup_number", cache)
    assert not misspelt.results and "SpacegroupAnalyzer.get_space_group_number" in misspelt.note


def test_second_parse_reuses_unchanged_modules_and_a_small_budget_is_resumed(workspace, tmp_path, monkeypatch):
    # A cache of its own: the session's shared one may hold smact already (the docs-search benchmark parses it).
    monkeypatch.setenv("EVOSKILL_CACHE_PATH", str(tmp_path / "own-cache"))
    cache = open_cache(get_settings())
    first = parse_local_package("smact.structure_prediction", cache, budget_s=0.0)  # no time for a single file
    assert not first.complete and first.files_parsed == 0 and first.files_total > 3
    second = parse_local_package("smact.structure_prediction", cache, budget_s=600)
    assert second.complete and second.files_parsed == second.files_total
    modules = load_modules(cache, "smact.structure_prediction")
    assert len(modules) == second.files_total and all(m.module.startswith("smact.structure_prediction") for m in modules)
    again = parse_local_package("smact.structure_prediction", cache, budget_s=0.0)  # nothing changed: all reused
    assert again.complete


def test_unknown_package_is_a_clear_error_with_close_names(cache):
    with pytest.raises(ToolError, match=r"no installed package named 'pymatgn'.*pymatgen") as info:
        parse_local_package("pymatgn", cache)
    assert "check_installed_packages" in info.value.hint
    with pytest.raises(ToolError, match="parse_local_package"):
        query_knowledge_graph("spglib_never_parsed", "find x", cache)


def test_a_package_with_import_side_effects_is_parsed_without_running_it(cache, tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "boom"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise SystemExit('imported!')\nclass Bomb:\n    def tick(self, n: int = 3) -> None: ...\n")
    (pkg / "broken.py").write_text("def oops(:\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    graph = parse_local_package("boom", cache)
    assert graph.complete and graph.files_total == 2
    assert query_knowledge_graph("boom", "signature of tick", cache).results == ["boom.Bomb.tick(self, n: int = 3) -> None"]
    broken = parse_module("boom", "boom.broken", pkg / "broken.py")
    assert broken.error and "does not parse" in broken.error


def test_unreadable_query_says_which_forms_exist(cache):
    parse_local_package("spglib", cache)
    with pytest.raises(ToolError, match="cannot read the query") as info:
        query_knowledge_graph("spglib", "tell me everything", cache)
    assert "classes with method NAME" in info.value.hint


def test_compiled_rdkit_modules_and_functions_defined_by_assignment_are_in_the_graph(cache):
    graph = parse_local_package("rdkit.Chem", cache, budget_s=600)
    assert graph.complete
    exact = query_knowledge_graph("rdkit", "signature of CalcExactMolWt", cache).results
    assert exact[0].startswith("rdkit.Chem.rdMolDescriptors.CalcExactMolWt( (Mol)mol") and "exact molecular weight" in exact[0]
    assert query_knowledge_graph("rdkit", "signature of MolWt", cache).results == [
        "rdkit.Chem.Descriptors.MolWt(*x, **y)  The average molecular weight of the molecule"
    ]
    assert "rdkit.Chem.rdchem.Mol" in query_knowledge_graph("rdkit", "classes with method GetNumAtoms", cache).results


def test_an_extension_module_that_fails_to_import_is_recorded_not_fatal(cache, tmp_path, monkeypatch):
    import sysconfig

    pkg = tmp_path / "site" / "fragile"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / ("native" + sysconfig.get_config_var("EXT_SUFFIX"))).write_bytes(b"not a shared object")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    graph = parse_local_package("fragile", cache)
    assert graph.complete
    native = next(m for m in load_modules(cache, "fragile") if m.module == "fragile.native")
    assert native.error and "import failed" in native.error
