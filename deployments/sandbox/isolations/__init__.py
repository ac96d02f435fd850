"""The ways a run is contained, strongest first; a new one is a module here and a line in ``ISOLATIONS``."""

from __future__ import annotations

from deployments.sandbox.isolations.base import Containment, Isolation
from deployments.sandbox.isolations.bwrap import Bwrap
from deployments.sandbox.isolations.none import NoIsolation
from deployments.sandbox.isolations.unshare import Unshare

__all__ = ["ISOLATIONS", "Containment", "Isolation"]

ISOLATIONS: dict[str, Isolation] = {isolation.name: isolation for isolation in (Bwrap(), Unshare(), NoIsolation())}
