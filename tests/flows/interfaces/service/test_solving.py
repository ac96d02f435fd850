"""A door's ``solve`` in the workspace's service: the service's progress lines read back as stage events."""

from flows.interfaces.service.solving import STAGE_LINE


def test_the_services_stage_lines_are_read_whole_branch_names_included():
    heard = STAGE_LINE.match("[  12.5s] ✗ debug:diagnostic: stage debug:diagnostic: the call was cancelled")
    assert heard is not None and (heard["mark"], heard["stage"], heard["detail"]) == ("✗", "debug:diagnostic", "stage debug:diagnostic: the call was cancelled")
    plain = STAGE_LINE.match("[   0.3s] … skill")
    assert plain is not None and (plain["stage"], plain["detail"]) == ("skill", None)
    assert STAGE_LINE.match("Prefect API: http://127.0.0.1:4200/api") is None
