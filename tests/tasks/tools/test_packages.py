from deployments.packages import imported_packages, missing_packages, module_names
from deployments.settings import Settings, get_settings
from tasks.tools.packages import install_dependencies
from tests.planted import plant


def test_imports_are_read_from_code():
    code = "import os, json\nimport numpy as np\nfrom ase.build import molecule\nfrom . import x\n"
    assert imported_packages(code) == ["ase", "numpy"]
    assert imported_packages("this is not python(") == []


def test_model_supplied_names_are_sanitised():
    assert module_names(["Top-level packages the script imports", "ase.build", " numpy ", "json", "rdkit"]) == ["ase", "numpy", "rdkit"]


def test_missing_packages_never_raise():
    assert missing_packages(["ase", "surely_not_installed_pkg", "a b c", "x.y.z"]) == ["surely_not_installed_pkg", "x"]


def test_install_is_refused_unless_enabled_and_allowed():
    refused = install_dependencies(["sklearn"], Settings(allow_install=False)).refused
    assert refused == ["scikit-learn: installing is disabled (EVOSKILL_ALLOW_INSTALL=false)"]
    refused = install_dependencies(["sklearn"], Settings(allow_install=True, install_allowlist=["numpy"])).refused
    assert "not on the install allow-list" in refused[0]


def test_package_not_installable_offline_is_reported(monkeypatch):
    # A name no index has: pip fails, and the report says so instead of raising.
    report = install_dependencies(["evoskill_no_such_pkg_zz"], Settings(allow_install=True, install_allowlist=["evoskill-no-such-pkg-zz"]))
    assert report.installed == [] and "not installable" in report.refused[0]


def test_schema_words_are_dropped_unless_importable(tmp_path, monkeypatch):
    assert module_names(["items", "type", "pattern", "format", "enum", "string", "numpy"]) == ["numpy"]
    (tmp_path / "pattern.py").write_text("")  # `pattern` is a PyPI package: installed, it is a real import
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_names(["items", "type", "pattern", "format", "numpy"]) == ["numpy", "pattern"]
    assert missing_packages(["pattern", "items"]) == []


def test_pip_runs_isolated_from_the_users_folder(workspace, tmp_path, monkeypatch):
    here = tmp_path / "here"
    marker = plant(here, "pip", "spglib")
    monkeypatch.chdir(here)
    settings = get_settings(allow_install=True, install_allowlist=["pydantic"])
    report = install_dependencies(["pydantic"], settings)  # installed already: pip says so without the network
    assert report.installed == ["pydantic"] and report.refused == []
    assert not marker.exists()


def test_a_misspelt_import_is_reported_as_a_typo_and_never_installed():
    settings = Settings(allow_install=True, install_allowlist=["pymattgen", "rdkti"])
    report = install_dependencies(["pymattgen", "rdkti", "nonexistent_pkg_xyz"], settings)
    assert report.refused[0] == "pymattgen: no such package; a typo of 'pymatgen' in the code"
    assert report.refused[1] == "rdkti: no such package; a typo of 'rdkit' in the code"
    assert not report.refused[2].startswith("nonexistent_pkg_xyz: no such package; a typo")  # nothing installed is close to it
    assert report.installed == []
