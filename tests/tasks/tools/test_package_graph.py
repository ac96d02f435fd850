"""The package knowledge graph: parsed from installed sources, cached, bounded; queried."""

import os

import pytest

from deployments.packages import library_roots
from deployments.settings import get_settings
from skills.documents import PackageModule
from skills.store import open_cache
from tasks.tools import package_graph
from tasks.tools.errors import ToolError
from tasks.tools.graph_query import query_knowledge_graph
from tasks.tools.package_graph import load_modules, parse_local_package, parse_module


@pytest.fixture
def cache(workspace):
    return open_cache(get_settings())


@pytest.fixture
def site_dir(tmp_path, monkeypatch):
    """A folder standing for one more site-packages folder: on ``sys.path`` and among the installed packages' roots;
    what the test writes there is readable by every user, as pip installs it (the umask is put back after the test)."""
    os.umask(0o022)
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(package_graph, "library_roots", lambda: (*library_roots(), folder.resolve()))
    return folder


def test_pymatgen_graph_answers_the_questions_an_agent_asks(cache):
    graph = parse_local_package("pymatgen", cache, get_settings(), budget_s=600)
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
    first = parse_local_package("smact.structure_prediction", cache, get_settings(), budget_s=0.0)  # no time for a single file
    assert not first.complete and first.files_parsed == 0 and first.files_total > 3
    second = parse_local_package("smact.structure_prediction", cache, get_settings(), budget_s=600)
    assert second.complete and second.files_parsed == second.files_total
    modules = load_modules(cache, "smact.structure_prediction")
    assert len(modules) == second.files_total and all(m.module.startswith("smact.structure_prediction") for m in modules)
    again = parse_local_package("smact.structure_prediction", cache, get_settings(), budget_s=0.0)  # nothing changed: all reused
    assert again.complete


def test_unknown_package_is_a_clear_error_with_close_names(cache):
    with pytest.raises(ToolError, match=r"no installed package named 'pymatgn'.*pymatgen") as info:
        parse_local_package("pymatgn", cache, get_settings())
    assert "check_installed_packages" in info.value.hint
    with pytest.raises(ToolError, match="parse_local_package"):
        query_knowledge_graph("spglib_never_parsed", "find x", cache)


def test_a_package_with_import_side_effects_is_parsed_without_running_it(cache, site_dir):
    pkg = site_dir / "boom"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise SystemExit('imported!')\nclass Bomb:\n    def tick(self, n: int = 3) -> None: ...\n")
    (pkg / "broken.py").write_text("def oops(:\n")
    graph = parse_local_package("boom", cache, get_settings())
    assert graph.complete and graph.files_total == 2
    assert query_knowledge_graph("boom", "signature of tick", cache).results == ["boom.Bomb.tick(self, n: int = 3) -> None"]
    broken = parse_module("boom", "boom.broken", pkg / "broken.py")
    assert broken.error and "does not parse" in broken.error


def test_unreadable_query_says_which_forms_exist(cache):
    parse_local_package("spglib", cache, get_settings())
    with pytest.raises(ToolError, match="cannot read the query") as info:
        query_knowledge_graph("spglib", "tell me everything", cache)
    assert "classes with method NAME" in info.value.hint


def test_compiled_rdkit_modules_and_functions_defined_by_assignment_are_in_the_graph(cache):
    graph = parse_local_package("rdkit.Chem", cache, get_settings(), budget_s=600)
    assert graph.complete
    exact = query_knowledge_graph("rdkit", "signature of CalcExactMolWt", cache).results
    assert exact[0].startswith("rdkit.Chem.rdMolDescriptors.CalcExactMolWt( (Mol)mol") and "exact molecular weight" in exact[0]
    assert query_knowledge_graph("rdkit", "signature of MolWt", cache).results == [
        "rdkit.Chem.Descriptors.MolWt(*x, **y)  The average molecular weight of the molecule"
    ]
    assert "rdkit.Chem.rdchem.Mol" in query_knowledge_graph("rdkit", "classes with method GetNumAtoms", cache).results


def test_an_extension_module_that_fails_to_import_is_recorded_not_fatal(cache, site_dir):
    import sysconfig

    pkg = site_dir / "fragile"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / ("native" + sysconfig.get_config_var("EXT_SUFFIX"))).write_bytes(b"not a shared object")
    graph = parse_local_package("fragile", cache, get_settings())
    assert graph.complete
    native = next(m for m in load_modules(cache, "fragile") if m.module == "fragile.native")
    assert native.error and "import failed" in native.error


def test_only_dotted_names_of_installed_packages_are_parsed(cache, tmp_path, monkeypatch):
    """A path smuggled into the name, a package outside site-packages, or a link out of one: refused, nothing cached."""
    outside = tmp_path / "elsewhere"
    (outside / "conf").mkdir(parents=True)
    (outside / "conf" / "settings.py").write_text("def connect(password='hunter2-canary'): ...\n")
    (outside / "leaky").mkdir()
    (outside / "leaky" / "__init__.py").write_text("def connect(password='hunter2-canary'): ...\n")
    for name in [f"ase.{outside}/conf", f"ase./{outside}", "ase..", "ase.../../etc", "ase.calculators/../../..", "ase calculators", "ase.", ".ase"]:
        with pytest.raises(ToolError, match="not a dotted Python name"):
            parse_local_package(name, cache, get_settings())
    monkeypatch.syspath_prepend(str(outside))  # importable, but not installed: its files lie outside the environment
    with pytest.raises(ToolError, match="not an installed package"):
        parse_local_package("leaky", cache, get_settings())
    link_site = tmp_path / "site"
    (link_site / "linked").mkdir(parents=True)
    (link_site / "linked" / "__init__.py").write_text("")
    (link_site / "linked" / "secret.py").symlink_to(outside / "conf" / "settings.py")  # a link out of site-packages
    monkeypatch.syspath_prepend(str(link_site))
    monkeypatch.setattr(package_graph, "library_roots", lambda: (*library_roots(), link_site.resolve()))
    graph = parse_local_package("linked", cache, get_settings())
    assert graph.files_total == 1 and [m.module for m in load_modules(cache, "linked")] == ["linked"]
    assert all("hunter2-canary" not in m.model_dump_json() for m in cache.all(PackageModule))


def test_extension_modules_are_imported_in_the_sandbox_never_beside_evoskill(cache, site_dir, monkeypatch):
    """Importing an extension module runs its package's ``__init__``: that happens in the sandbox, which cannot write
    the marker file, never in evoskill's process or a child of it; the module is still described."""
    import _bisect
    import shutil
    import sys
    import sysconfig

    marker = site_dir.parent / "imported.txt"
    pkg = site_dir / "sidepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f"try:\n    open({str(marker)!r}, 'a').write('sidepkg\\n')\nexcept OSError:\n    pass\n")
    shutil.copy(_bisect.__file__, pkg / ("_bisect" + sysconfig.get_config_var("EXT_SUFFIX")))
    monkeypatch.chdir(site_dir)  # a child interpreter started here would find the package in its current folder
    graph = parse_local_package("sidepkg", cache, get_settings())
    assert graph.complete and not marker.exists() and "sidepkg" not in sys.modules
    native = next(m for m in load_modules(cache, "sidepkg") if m.module == "sidepkg._bisect")
    assert native.error is None and {"bisect_left", "bisect_right", "insort_left", "insort_right"} <= {f.name for f in native.functions}
    bisect_right = next(f for f in native.functions if f.name == "bisect_right")
    assert bisect_right.text_signature == "($module, /, a, x, lo=0, hi=None, *, key=None)"
