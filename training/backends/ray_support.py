"""Checks and start-up of Ray for the rllib backend, without importing Ray at module
load (``parlour train --backend rllib`` checks before anything is written).

`check` finds the mistakes a user makes before any work: Ray (with RLlib) not
installed, a Ray version the adapter was not written for, a cluster address nothing
answers at (a quick TCP check), and a cluster that refuses to be joined (e.g. without
its auth token: `check` joins it). Each is one line (`RayUnavailable`, a ValueError)
saying what to install or check. `connect` then starts a local Ray or uses the joined
cluster.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from importlib import metadata

SUPPORTED = ((2, 60), (2, 61))
"""Ray versions the rllib backend runs on: [2.60, 2.61) (the ``rllib`` extra's pin).
RLlib's current API stack still changes between minor releases."""
INSTALL = "pip install 'parlour[rllib]' (ray[rllib]>=2.60,<2.61)"
DEFAULT_PORT = 6379


class RayUnavailable(ValueError):
    """Ray cannot be used for this run: not installed, unsupported, or unreachable."""


def ray_version() -> str | None:
    """The installed Ray's version, or None when Ray (with RLlib) is not installed."""
    try:
        if importlib.util.find_spec("ray") is None:
            return None
        if importlib.util.find_spec("ray.rllib") is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return metadata.version("ray")
    except metadata.PackageNotFoundError:
        return None


def check_cpus(runners: int) -> None:
    """`RayUnavailable` when the Ray this process is connected to (a joined cluster,
    or one started before) has fewer CPUs than ``runners`` env runners need (one
    each): RLlib would wait for them forever. Nothing to check before Ray runs: a
    local Ray is started with enough."""
    import ray

    if not ray.is_initialized():
        return
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if runners > cpus:
        raise RayUnavailable(
            f"--num-env-runners {runners} needs {runners} CPUs, one per runner; the "
            f"Ray cluster has {cpus}: add nodes or ask for fewer runners"
        )


def _major_minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def check_version(version: str | None = None) -> str:
    """The installed Ray version, or `RayUnavailable` when it is missing or not one
    the backend supports (``version`` stands in for the installed one)."""
    version = ray_version() if version is None else version
    if version is None:
        raise RayUnavailable(
            f"--backend rllib needs Ray with RLlib, which is not installed: {INSTALL}"
        )
    low, high = SUPPORTED
    got = _major_minor(version)
    if got is None or not low <= got < high:
        raise RayUnavailable(
            f"--backend rllib supports Ray {low[0]}.{low[1]}.x, not the installed "
            f"{version}: {INSTALL}"
        )
    return version


def split_address(address: str) -> tuple[str, int]:
    """(host, port) of a Ray address ``HOST[:PORT]`` (``ray://`` allowed); ValueError
    for one that is not."""
    text = address.strip()
    if text.startswith("ray://"):
        text = text[len("ray://") :]
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, str(DEFAULT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayUnavailable(
            f"--address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379, what "
            "'ray start --head' prints)"
        )
    return host, int(port)


def check_address(address: str, timeout: float = 3.0) -> None:
    """`RayUnavailable` unless something listens at the cluster address (a TCP
    connection to its GCS port; Ray's own connect would retry for a minute)."""
    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise RayUnavailable(
            f"no Ray cluster answers at --address {address} ({reason}): start one "
            "with 'ray start --head' there, or check the host and port"
        ) from None


def check(address: str | None = None) -> str:
    """Everything `connect` needs: Ray with RLlib installed in a supported version
    and, with ``address``, a cluster answering there that lets this process join
    (it stays joined, for `connect`). Returns the Ray version."""
    version = check_version()
    if address is not None:
        check_address(address)
        join(address)
    return version


# the cluster address this process joined in `join` (the check), for `connect`
_joined: list[str] = []


def join(address: str) -> None:
    """Join the cluster at ``address`` now (``ray.init``), as the last check before
    anything is written: a cluster that refuses this process (e.g. without its auth
    token) is `RayUnavailable`, one line. `connect` then uses the connection and
    `disconnect` ends it."""
    import ray

    if ray.is_initialized():
        return
    try:
        held: list[str] = []
        with _stderr_held(held):
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        sys.stderr.write("".join(held))
    except Exception as err:  # noqa: BLE001 (Ray raises many types; one line out)
        text = str(err).strip()
        first = text.splitlines()[0] if text else type(err).__name__
        # Something answers there (check_address) but the join failed: most often
        # the token that Ray 2.60 wants, which Ray's message does not name.
        hint = (
            " (is it a Ray head's port, and is this process given the cluster's "
            "auth token: RAY_AUTH_MODE=token and RAY_AUTH_TOKEN or "
            "RAY_AUTH_TOKEN_PATH, as on its nodes?)"
        )
        raise RayUnavailable(
            f"cannot join the Ray cluster at --address {address}: {first[:200]}{hint}"
        ) from None
    _joined.append(address)


@contextlib.contextmanager
def _stderr_held(into: list[str]) -> Iterator[None]:
    """Hold what is written to the process's stderr (file descriptor 2, where Ray's
    C++ core logs a refused join once a second until it gives up) and append it to
    ``into``; the caller shows it or, when the join failed, says it in one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            into.append(held.read())


def connect(address: str | None, num_cpus: int) -> bool:
    """Join the cluster at ``address``, or start a local Ray with ``num_cpus`` CPUs;
    reuse the Ray this process already runs. Returns whether it is this module's to
    end (then `disconnect` shuts it down)."""
    import ray

    if ray.is_initialized():
        if address is not None and address in _joined:
            _joined.remove(address)
            return True  # joined by the check just before
        return False
    if address is not None:
        join(address)
        _joined.remove(address)
        return True
    ray.init(
        address="local",
        num_cpus=num_cpus,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    return True


def disconnect(started: bool) -> None:
    """Shut down the Ray that `connect` started, or leave the cluster it joined (the
    cluster keeps running)."""
    if started:
        import ray

        ray.shutdown()


def node_id() -> str:
    """The Ray node this process runs on (env runners report it)."""
    import ray

    return ray.get_runtime_context().get_node_id()


__all__ = [
    "SUPPORTED",
    "RayUnavailable",
    "check",
    "check_address",
    "check_cpus",
    "check_version",
    "connect",
    "join",
    "disconnect",
    "node_id",
    "ray_version",
    "split_address",
]
