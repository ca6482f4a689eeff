"""A multi-node Ray cluster on this machine for tests and benchmarks: a head and worker
nodes, each started with ``ray start --block`` in a session of its own, so that
stopping it ends exactly the processes it started (by their process group) and never
another Ray on the machine (``ray stop`` would end every Ray of the user).

Ray 2.60 authenticates with a token; the cluster has its own (``RAY_AUTH_TOKEN`` in
`RayCluster.env`, never the user's ``~/.ray/auth_token``), which every process that
joins it needs in its environment::

    with RayCluster(tmp_path, cpus_per_node=[1, 1]) as cluster:
        subprocess.run([..., "--address", cluster.address], env=cluster.env)
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

RAY = str(Path(sys.executable).with_name("ray"))


def outlived(processes: list, timeout: float = 90.0) -> list:
    """Of ``processes`` (`psutil.Process` objects of a Ray that a killed driver had
    started), those still running after ``timeout`` s, killed now by their ids. An
    exited process its new parent has not reaped yet (a zombie: PID 1 of a container
    may never reap it) counts as ended. Ray's agents notice their raylet gone only
    after a few checks, later still on a loaded machine: hence the long wait."""
    import psutil

    def running(p) -> bool:
        try:
            return p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + timeout
    left = [p for p in processes if running(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = [p for p in left if running(p)]
    for p in left:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    return left


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RayCluster:
    """A head node and ``len(cpus_per_node) - 1`` worker nodes, with that many CPUs
    each, under ``root`` (its temp dir and logs)."""

    def __init__(
        self, root: str | Path, cpus_per_node: list[int], timeout: float = 90.0
    ) -> None:
        self.root = Path(root)
        self.cpus_per_node = list(cpus_per_node)
        self.timeout = timeout
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
        }
        self.env.pop("RAY_AUTH_TOKEN_PATH", None)
        self.env.pop("RAY_ADDRESS", None)
        # Ray's session paths (sockets) must stay short: a temp dir of our own
        self.temp_dir = (
            Path(os.environ.get("PARLOUR_RAY_TMP", "/tmp"))
            / f"prc{os.getpid()}_{self.port}"
        )

    def _start(self, args: list[str], name: str) -> None:
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 (kept for the proc)
        self.procs.append(
            subprocess.Popen(
                [RAY, "start", "--block", "--disable-usage-stats", *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, ours to end
                env=self.env,
            )
        )

    def start(self, attempts: int = 3) -> RayCluster:
        """Start the nodes and wait until all of them have joined; a port taken in
        the meantime (the ports are free when chosen) is retried with new ones."""
        for attempt in range(attempts):
            try:
                return self._start_nodes()
            except RuntimeError:
                self.stop()
                if attempt == attempts - 1:
                    raise
                self.port = free_port()
                self.address = f"127.0.0.1:{self.port}"
        return self

    def _start_nodes(self) -> RayCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        self._start(
            [
                "--head",
                f"--port={self.port}",
                f"--num-cpus={self.cpus_per_node[0]}",
                f"--temp-dir={self.temp_dir}",
                f"--ray-client-server-port={free_port()}",
                "--include-dashboard=false",
                "--node-ip-address=127.0.0.1",
            ],
            "head",
        )
        self._wait(1)
        for i, cpus in enumerate(self.cpus_per_node[1:], start=1):
            self._start(
                [
                    f"--address={self.address}",
                    f"--num-cpus={cpus}",
                    "--node-ip-address=127.0.0.1",
                ],
                f"worker{i}",
            )
        self._wait(len(self.cpus_per_node))
        return self

    def alive_nodes(self) -> list[str]:
        """Node ids of the nodes the cluster reports alive (a short-lived driver)."""
        code = (
            "import ray, json; "
            f"ray.init(address={self.address!r}, log_to_driver=False, "
            "configure_logging=False); "
            "print(json.dumps([n['NodeID'] for n in ray.nodes() if n['Alive']]))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=self.timeout,
            env=self.env,
        )
        lines = out.stdout.strip().splitlines()
        return json.loads(lines[-1]) if out.returncode == 0 and lines else []

    def _wait(self, nodes: int) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"a ray node exited early (code {proc.returncode}); logs in "
                        f"{self.root}"
                    )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                time.sleep(0.5)
                continue
            if nodes <= 1 or len(self.alive_nodes()) >= nodes:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Ray cluster did not come up; logs in {self.root}")

    def stop(self) -> None:
        """End the nodes' process groups (SIGTERM, then SIGKILL), workers first."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 20
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            # what the node started lives in its process group: end what is left
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        self.procs.clear()

    def __enter__(self) -> RayCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
