"""Worker resources: parsed, formatted, detected, configured."""

import pytest

from deployments.resources import (
    ResourceError,
    detect_gpus,
    detected_resources,
    format_resources,
    parse_resources,
    worker_resources,
)
from deployments.settings import Settings


def test_resources_round_trip_between_text_and_numbers():
    assert parse_resources("GPU=1, MEMORY=8e9") == {"GPU": 1.0, "MEMORY": 8e9}
    assert format_resources({"GPU": 2.0, "SCRATCH": 0.5}) == "GPU=2 SCRATCH=0.5"


@pytest.mark.parametrize("text, problem", [("GPU", "NAME=AMOUNT"), ("GPU=one", "must be a number"), ("GPU=-1", "negative"), ("1GPU=1", "NAME=AMOUNT")])
def test_bad_resource_text_is_refused_with_the_reason(text, problem):
    with pytest.raises(ResourceError, match=problem):
        parse_resources(text)


def test_gpus_follow_cuda_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert detect_gpus() == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert detect_gpus() == 0 and "GPU" not in detected_resources(1e9)
    assert detected_resources(1e9)["MEMORY"] == 1e9


def test_configured_resources_replace_the_detected_ones():
    assert worker_resources(Settings(dask_worker_resources={"GPU": 1})) == {"GPU": 1}
    assert "MEMORY" in worker_resources(Settings())
