"""Shared test set-up: every test with ``env_name`` and ``options`` arguments runs once
per registered variant (``parlour.envs.VARIANTS``), so a game that registers is covered
by the generic tier without touching the tests."""

from __future__ import annotations

import os
from typing import Any

import pytest

# Tianshou compiles its return-computation helpers with numba whenever a policy is
# built (no on-disk cache): 5-20 s per test process on two cores, for code no test
# runs. Plain Python is enough here; set NUMBA_DISABLE_JIT=0 to test with the JIT.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

from parlour import envs


def variant_id(env_name: str, options: dict[str, Any]) -> str:
    """A readable test id, e.g. ``german_whist_v0[variant=honeymoon,episode=deal]``."""
    opts = ",".join(f"{k}={v}" for k, v in options.items())
    return f"{env_name}[{opts}]"


def all_variants() -> list[tuple[str, dict[str, Any]]]:
    """Every (env name, options) pair the registry declares."""
    return [
        (name, dict(opts))
        for name in envs.names()
        for opts in envs.VARIANTS.get(name, [])
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if {"env_name", "options"} <= set(metafunc.fixturenames):
        pairs = all_variants()
        metafunc.parametrize(
            ("env_name", "options"), pairs, ids=[variant_id(n, o) for n, o in pairs]
        )


@pytest.fixture(scope="session")
def repo_files() -> list[str]:
    """The checkout's files, relative to its root: tracked ones and those not yet added,
    never ignored ones (the packaging tests read them)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [rel for rel in listed if (root / rel).is_file()]


@pytest.fixture(scope="module")
def local_ray():
    """A Ray of the test module's own with 2 CPUs (never an existing cluster), shut
    down after the module; the RLlib backend and adapters use the running one."""
    import ray
    import torch

    torch.set_num_threads(1)
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    yield
    ray.shutdown()
