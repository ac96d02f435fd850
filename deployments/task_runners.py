"""The Prefect task runner for parallel stages: Dask (prefect-dask) when a cluster is configured, threads otherwise.

>>> from deployments.settings import Settings
>>> type(task_runner(Settings())).__name__
'ThreadPoolTaskRunner'
"""

from __future__ import annotations

from typing import Any

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from deployments.settings import Settings

__all__ = ["task_runner"]


def task_runner(settings: Settings) -> TaskRunner[Any]:
    """``DaskTaskRunner`` on the configured cluster when ``settings.uses_dask_runner()``, else a thread pool."""
    if not settings.uses_dask_runner():
        return ThreadPoolTaskRunner()
    from prefect_dask import DaskTaskRunner

    from deployments.cluster import open_cluster

    return DaskTaskRunner(address=open_cluster(settings).address)
