"""Continuous-learning tools: offline search, code extraction from files and pages, retrieval of extracted code."""

import importlib.util
import json
import time

import httpx
import pytest

from deployments.settings import get_settings
from skills.store import open_cache, open_store
from tasks.tools.docs_search import TavilySearch, search
from tasks.tools.errors import ToolError
from tasks.tools.extract import (
    code_blocks,
    extract_code_from_url,
    retrieve_extracted_code,
)


def test_offline_search_finds_ase_equation_of_state_docs(workspace):
    settings = get_settings()
    hits = search("equation of state fit", settings, open_cache(settings), k=3)
    assert hits[0].title == "ase.eos.EquationOfState" and hits[0].kind == "api"
    assert "Fit equation of state" in hits[0].snippet and hits[0].location.endswith("ase/eos.py")
    space_group = search("space group number of a structure", settings, open_cache(settings), k=3)
    assert "pymatgen.symmetry.analyzer.SpacegroupAnalyzer.get_space_group_number" in [h.title for h in space_group]
    with pytest.raises(ToolError, match="empty"):
        search(" ", settings, open_cache(settings))


def test_web_provider_speaks_tavily_and_reports_failure_as_a_tool_error():
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert request.headers["authorization"] == "Bearer k" and body == {"query": "eos", "max_results": 2}
        return httpx.Response(200, json={"results": [{"title": "EOS", "url": "https://x/eos", "content": "fit", "score": 0.9}]})

    hits = TavilySearch("k", transport=httpx.MockTransport(handler)).search("eos", 2)
    assert [(h.title, h.location, h.kind) for h in hits] == [("EOS", "https://x/eos", "web")]
    down = TavilySearch("k", transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    with pytest.raises(ToolError, match="web search failed"):
        down.search("eos")


def test_extract_code_from_local_docs_notebooks_and_python(workspace, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir(parents=True)
    settings = get_settings(sandbox_inputs=[docs])  # a granted input: readable, as in the sandbox
    store = open_store(settings)
    eos = extract_code_from_url(importlib.util.find_spec("ase.eos").origin, store, settings, user="local")
    assert any("EquationOfState" in e.code and "EquationOfState" in e.context for e in eos)
    (docs / "guide.md").write_text("# Relax\n\nRelax a cell like this:\n\n```python\nfrom ase.build import bulk\natoms = bulk('Cu')\n```\n")
    (docs / "guide.rst").write_text("Fitting\n=======\n\nFit it::\n\n    eos.fit()\n\n.. code-block:: python\n\n   print(1)\n")
    cells = [{"cell_type": "markdown", "source": ["Morgan fingerprints"]}, {"cell_type": "code", "source": ["from rdkit import Chem\n"]}]
    (docs / "demo.ipynb").write_text(json.dumps({"cells": cells}))
    md = extract_code_from_url(str(docs / "guide.md"), store, settings, user="local")
    assert [(e.code, e.context) for e in md] == [("from ase.build import bulk\natoms = bulk('Cu')", "Relax a cell like this:")]
    rst = extract_code_from_url(str(docs / "guide.rst"), store, settings, user="local")
    assert [e.code for e in rst] == ["eos.fit()", "print(1)"] and rst[0].context == "Fit it:" and rst[1].context == "Fit it:"
    nb = extract_code_from_url(str(docs / "demo.ipynb"), store, settings, user="local")
    assert nb[0].code == "from rdkit import Chem" and nb[0].context == "Morgan fingerprints"
    html = code_blocks('<h2>EOS</h2><p>Fit an EOS:</p><div class="highlight"><pre>eos = EquationOfState(v, e)</pre></div>', "html")
    assert html == [("eos = EquationOfState(v, e)", "Fit an EOS:")]
    found = retrieve_extracted_code("relax bulk Cu", store, user="local", k=1)
    assert found[0].code.startswith("from ase.build import bulk")


def test_extraction_bad_input_is_quick_and_clear(workspace, tmp_path):
    granted = tmp_path / "inputs"
    granted.mkdir()
    settings = get_settings(sandbox_inputs=[granted])
    store = open_store(settings)
    with pytest.raises(ToolError, match="no code has been extracted yet"):
        retrieve_extracted_code("anything", store, user="local")
    started = time.perf_counter()
    with pytest.raises(ToolError, match="cannot fetch") as info:
        extract_code_from_url("http://127.0.0.1:9/nothing-listens-here", store, settings, user="local")
    assert time.perf_counter() - started < settings.fetch_timeout_s + 1 and "offline" in info.value.hint
    with pytest.raises(ToolError, match="outside the readable folders"):
        extract_code_from_url("/etc/hostname", store, settings, user="local")
    with pytest.raises(ToolError, match="neither an http"):
        extract_code_from_url("ftp://example.org/x.md", store, settings, user="local")
    binary = granted / "blob.md"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match="binary"):
        extract_code_from_url(str(binary), store, settings, user="local")
    (granted / "data.xyz").write_text("2\n\nH 0 0 0\nH 0 0 0.74\n")
    with pytest.raises(ToolError, match="cannot extract code from a .xyz file"):
        extract_code_from_url(str(granted / "data.xyz"), store, settings, user="local")
