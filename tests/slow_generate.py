"""A slow generation task for the Dask tests (importable on the workers: tests/ is on their path)."""

import time


def slow_task(index, op, seed, depth):
    """:func:`conformance.dask_executor._generate_task`, 0.4 s later (time to kill its worker)."""
    from conformance.dask_executor import _generate_task

    time.sleep(0.4)
    return _generate_task(index, op, seed, depth)
