from pathlib import Path

import yaml
from prefect import Flow
from prefect.flows import load_flow_from_entrypoint

ROOT = Path(__file__).resolve().parents[1]


def test_every_deployment_entrypoint_is_a_flow(monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    assert spec["deployments"], "prefect.yaml declares no deployment"
    for deployment in spec["deployments"]:
        flow = load_flow_from_entrypoint(deployment["entrypoint"])
        assert isinstance(flow, Flow), deployment["name"]
        assert deployment["work_pool"]["name"] == "evoskill-process"
