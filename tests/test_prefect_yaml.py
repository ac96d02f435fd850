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


def test_nightly_benchmark_is_scheduled_with_parameters_the_flow_accepts(monkeypatch):
    from prefect.client.schemas.schedules import CronSchedule

    monkeypatch.chdir(ROOT)
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    (nightly,) = [d for d in spec["deployments"] if d["name"] == "benchmark-nightly"]
    (schedule,) = nightly["schedules"]
    assert CronSchedule(cron=schedule["cron"], timezone=schedule["timezone"]).cron == "0 2 * * *"
    flow = load_flow_from_entrypoint(nightly["entrypoint"])
    params = flow.validate_parameters(nightly["parameters"])
    assert params["reps"] == 3 and params["levels"] == [0, 1]
    for folder in params["suite"]:
        assert (ROOT / folder).is_dir()


def test_discovery_campaign_parameters_are_accepted_by_the_flow(monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    (campaign,) = [d for d in spec["deployments"] if d["name"] == "discovery-campaign"]
    flow = load_flow_from_entrypoint(campaign["entrypoint"])
    params = flow.validate_parameters(campaign["parameters"])
    assert params["oracle"] == "emt" and params["budget"] == 50 and "ucb" in params["policies"] and params["baseline"] == "made"


def test_every_deployment_parameter_is_described_in_the_run_form(monkeypatch):
    """Prefect's custom-run form shows each parameter's description, read from the flow's docstring ``Args:``."""
    from prefect.utilities.callables import parameter_schema

    monkeypatch.chdir(ROOT)
    for deployment in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]:
        flow = load_flow_from_entrypoint(deployment["entrypoint"])
        properties = parameter_schema(flow).model_dump()["properties"]
        undescribed = [name for name, field in properties.items() if len(field.get("description") or "") < 10]
        assert not undescribed, (deployment["name"], undescribed)
