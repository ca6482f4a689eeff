"""Spreading games over a Ray cluster: one place for the league, the arena and the
strategy-tips harness (``--executor ray [--address ADDR]``; the trainer's
``parlour train --backend`` is another thing: which library trains).

Each command cuts its games into jobs of a few deals (a league batch, an arena chunk, a
tips block). `RaySession.spread` sends them to Ray as tasks, a few in flight per CPU
of the cluster, and hands each result back as it ends; `RaySession.map` is the same
behind the tips harness's `Runner` interface. Every game's seeds come from its deal
(agents are reseeded from the deal seed before each game), so the results are the
local run's, whatever the cluster, the order the jobs end in or the size of the jobs.

**What goes over the wire.** Ray calls the task function by its module and name (a
function of Parlour's own, never a closure or a lambda: `check_function`), so every node
runs the same Parlour installation, and the arguments are plain data (`check_wire`):
env names and options, agent spec strings, deal seeds, and for ``ckpt:`` agents the
policy's weights as numpy arrays with the checkpoint's manifest (`ship_checkpoints`),
put into Ray's object store once per run. No pickled object of a user's (an `Agent`
instance, a callback) is sent, and a worker never reads a checkpoint file: the weights
are checked against their SHA-256 here, where the file is, before anything starts.
The results that come back are plain data too: numbers, rows of strings.

Workers keep the envs and agents they build between jobs (`worker_env`,
`worker_agent`), as a process pool's workers do.

**A worker lost.** A job whose worker process (or node) dies under it is run again by
Ray, up to `TASK_RETRIES` times, on whatever worker is free; since its games come from
its deal seeds alone, the rerun's rows are the lost run's and the command's output is
the local run's, game for game (``tests/test_ray_faults.py`` kills a worker by its
process id in the middle of an arena, a league and a tips run). Past the retries the
command stops with one line (`DistributedError`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..agents.spec import checkpoint_path, ray_playable

EXECUTORS = ("local", "ray")
INSTALL_HINT = "pip install 'parlour[rllib]' (it brings ray[rllib])"
#: tasks in flight per CPU of the cluster: one running, one waiting to start
PER_CPU = 2
#: seconds to wait for the head node's port before calling an address unreachable
CONNECT_TIMEOUT = 5.0
#: times Ray runs a job again whose worker process or node died under it (a job is
#: a pure function of its seeds, so a rerun gives the same rows); a job's own error
#: is never retried (it would fail again)
TASK_RETRIES = 5

class DistributedError(ValueError):
    """Bad ``--executor``/``--address`` input, Ray missing, a cluster out of reach or
    one that failed under the run; the message is one line."""


def check_executor(executor: str, address: str | None = None) -> None:
    """One-line `DistributedError` for an executor other than local/ray, or an
    address without the ray executor."""
    if executor not in EXECUTORS:
        raise DistributedError(
            f"executor must be {' or '.join(EXECUTORS)}, got {executor!r}"
        )
    if address is not None and executor != "ray":
        raise DistributedError(
            "--address is the Ray cluster's: use it with --executor ray"
        )


def executor_of(executor: str, backend: str | None) -> str:
    """The executor a Python call asked for: ``executor=``, or the old keyword
    ``backend=`` (local|ray) with a DeprecationWarning (an ``executor=`` other than
    the default must then agree with it)."""
    if backend is None:
        return executor
    warnings.warn(
        "the keyword backend= (local|ray) is now executor=",
        DeprecationWarning,
        stacklevel=3,
    )
    if executor not in ("local", backend):
        raise DistributedError(
            f"executor={executor!r} and the old backend={backend!r} disagree"
        )
    return backend


def import_ray() -> Any:
    """The ``ray`` module, or a one-line `DistributedError` saying what to install."""
    try:
        import ray
    except ImportError:
        raise DistributedError(f"--executor ray needs Ray: {INSTALL_HINT}") from None
    return ray


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """One-line `DistributedError` unless a head node answers at ``address``.

    ``HOST:PORT`` is the head's address as ``ray start --head`` prints it (its GCS
    port, 6379 by default) and ``ray://HOST:PORT`` a Ray Client server; both are
    tried with a TCP connection first, so an address that nothing answers fails in
    seconds rather than after Ray's own minute of retries. ``auto`` (the cluster
    ``ray start`` started on this machine) is left to Ray.
    """
    if address == "auto":
        return
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise DistributedError(
            f"bad --address {address!r}: write HOST:PORT (the head node's address "
            "that 'ray start --head' prints, e.g. 10.0.0.5:6379), ray://HOST:PORT "
            "or auto"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            grpc = _speaks_grpc(sock)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        if isinstance(err, TimeoutError | socket.timeout):
            reason = f"no answer in {timeout:g} s"
        raise DistributedError(
            f"no Ray cluster answers at {address} ({reason}); start one with "
            "'ray start --head' or check the address (docs/scale-out.md)"
        ) from None
    if not grpc:
        raise DistributedError(
            f"{address} answers, but not as a Ray head node (no gRPC there); give "
            "the address 'ray start --head' printed (docs/scale-out.md)"
        )


# HTTP/2's client preface and an empty SETTINGS frame: a gRPC server (Ray's GCS, a Ray
# Client server) answers with its own SETTINGS frame
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4


def _speaks_grpc(sock: socket.socket) -> bool:
    """Whether the server on ``sock`` speaks HTTP/2 in the clear, as Ray's head does
    (Ray itself would retry a server that does not for minutes, silently). With
    ``RAY_USE_TLS`` the head speaks TLS and this cannot tell: it says yes."""
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return True
    sock.sendall(_H2_PREFACE)
    head = b""
    while len(head) < 9:
        block = sock.recv(9 - len(head))
        if not block:
            return False
        head += block
    return head[3] == _H2_SETTINGS and head[5:9] == bytes(4)


def check_function(fn: Callable) -> None:
    """TypeError unless ``fn`` is a module-level function of Parlour's own, which
    Ray sends by its name (cloudpickle pickles such a function by reference)."""
    module = getattr(fn, "__module__", "") or ""
    qualname = getattr(fn, "__qualname__", "")
    if module.split(".")[0] != "parlour" or "<" in qualname or "." in qualname:
        raise TypeError(
            f"a Ray task must be a module-level function of Parlour, got "
            f"{module}.{qualname}"
        )


_PLAIN = (type(None), bool, int, float, str, bytes, np.generic)


def check_wire(value: Any) -> Any:
    """``value`` if it is plain data (numbers, strings, numpy arrays of numbers, and
    tuples, lists, dicts and Parlour dataclasses of those); else TypeError. What a
    task is given passes through here, so no user object is ever pickled."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("an object array cannot be sent to a Ray task")
        return value
    if isinstance(value, list | tuple | frozenset | set):
        for item in value:
            check_wire(item)
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            check_wire(key)
            check_wire(item)
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if type(value).__module__.split(".")[0] != "parlour":
            raise TypeError(f"{type(value).__qualname__} is not Parlour's own data")
        for f in dataclasses.fields(value):
            check_wire(getattr(value, f.name))
        return value
    raise TypeError(
        f"{type(value).__qualname__} is not plain data and is never sent to a Ray "
        "task (send agent specs, not Agent objects)"
    )


# --- checkpoints: weights, not files --------------------------------------------------
@dataclass(frozen=True)
class ShippedCheckpoint:
    """What a worker gets of a checkpoint: its manifest and its policy's weights as
    float32 numpy arrays (what `parlour.training.policy.NumpyPolicy` plays)."""

    manifest: dict[str, Any]
    policy: dict[str, np.ndarray]

    @property
    def sha256(self) -> str:
        return str(self.manifest["weights_sha256"])


def ship_checkpoints(specs: Iterable[str]) -> dict[str, ShippedCheckpoint]:
    """Load and verify (`parlour.training.checkpoint.load`) every checkpoint the specs
    name, here; returns ``{PATH as written in the spec: ShippedCheckpoint}``."""
    from . import checkpoint as ckpt_io

    out: dict[str, ShippedCheckpoint] = {}
    for spec in specs:
        path = checkpoint_path(spec)
        if path is None or path in out:
            continue
        ckpt = ckpt_io.load(path)
        out[path] = ShippedCheckpoint(
            dict(ckpt.manifest), ckpt_io.to_numpy(ckpt.tensors["policy"])
        )
    return out


# --- the worker's side ----------------------------------------------------------------
# per process: envs and agents kept between jobs (a Ray worker or a pool worker runs
# many); bounded, since a long-lived worker may serve many runs
_CACHE: dict[Any, Any] = {}
_CACHE_SIZE = 64


def cached(key: Any, build: Callable[[], Any]) -> Any:
    """``build()``, kept in this process under ``key``."""
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = build()
    return _CACHE[key]


def _options_key(env_options: Mapping[str, Any] | Iterable) -> str:
    return json.dumps(dict(env_options), sort_keys=True, default=str)


def worker_env(env_name: str, env_options: Mapping[str, Any] | Iterable = ()) -> Any:
    """The env (wrapped, as `parlour.envs.make` gives it), kept in this process."""
    from .. import envs

    options = dict(env_options)
    return cached(
        ("env", env_name, _options_key(options)),
        lambda: envs.make(env_name, **options),
    )


def worker_agent(
    spec: str,
    env_name: str,
    env_options: Mapping[str, Any] | Iterable = (),
    seed: int | None = 0,
    role: Any = None,
    checkpoints: Mapping[str, ShippedCheckpoint] | None = None,
) -> Any:
    """The agent of ``spec`` (``role`` tells apart copies that play different seats),
    kept in this process; a ``ckpt:`` agent plays the shipped weights when
    ``checkpoints`` has them, else it loads its file."""
    from .. import agents as agents_mod

    options = dict(env_options)
    path = checkpoint_path(spec)
    shipped = (checkpoints or {}).get(path) if path is not None else None
    key = (
        "agent",
        env_name,
        _options_key(options),
        spec,
        seed,
        role,
        shipped.sha256 if shipped is not None else None,
    )
    return cached(
        key,
        lambda: agents_mod.make(
            spec, env_name, seed=seed, env_options=options, checkpoints=checkpoints
        ),
    )


# --- the driver's side ----------------------------------------------------------------
class RaySession:
    """Ray for one command: joins the cluster at ``address`` or starts a local Ray of
    its own (``address=None``; never a cluster someone else started on this machine),
    and shuts down only what it started. ``shared`` (the shipped checkpoints) is put
    into the object store once and given to every task as its second argument.

    It is also a runner for the tips harness: ``workers`` (the cluster's CPUs),
    ``map`` and ``close``, like `parlour.training.tips.Runner`.
    """

    def __init__(
        self,
        address: str | None = None,
        init_kwargs: Mapping[str, Any] | None = None,
        shared: Any = None,
    ):
        self.ray = import_ray()
        if address is not None:
            check_address(address)
        self.address = address
        self.init_kwargs = dict(init_kwargs or {})
        self._started = False
        self._open = False
        self._shared_ref = None
        self.shared = shared

    @property
    def shared(self) -> Any:
        """What every task gets as its second argument (None: nothing)."""
        return self._shared

    @shared.setter
    def shared(self, value: Any) -> None:
        if self._open:
            raise RuntimeError("set what the tasks share before the session starts")
        self._shared = check_wire(value)

    def __enter__(self) -> RaySession:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def begin(self, specs: Iterable[str], announce: bool = False) -> None:
        """Ship the checkpoints the agent ``specs`` name (as weights), join or start
        Ray, and with ``announce`` say on stderr where the tasks run."""
        specs = list(specs)
        for spec in specs:
            if not ray_playable(spec):
                raise DistributedError(f"agent {spec} cannot be played on a Ray worker")
        self.shared = ship_checkpoints(specs) or None
        self.start()
        if announce:
            print(self.describe(), file=sys.stderr)

    def start(self) -> None:
        """Join or start Ray (nothing if this process already has it)."""
        if self._open:
            return
        ray = self.ray
        if not ray.is_initialized():
            kwargs = {"log_to_driver": False, **self.init_kwargs}
            try:
                # "local": a fresh Ray of our own, never one that `ray start` left
                # running on this machine (Ray's default would join that)
                ray.init(address=self.address or "local", **kwargs)
            except (ConnectionError, RuntimeError, TimeoutError) as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else ""
                where = f"the Ray cluster at {self.address}" if self.address else "Ray"
                hint = ""
                if self.address not in (None, "auto") and (
                    "RAY_AUTH_MODE" not in os.environ
                ):
                    # Ray 2.60 joins an explicit address without a token unless told
                    hint = (
                        "; if the cluster uses token authentication, set "
                        "RAY_AUTH_MODE=token and give its token (docs/scale-out.md)"
                    )
                raise DistributedError(
                    f"cannot start or join {where}: {first or type(err).__name__}"
                    + hint
                ) from None
            self._started = True
        self._open = True
        if self._shared is not None:
            self._shared_ref = ray.put(self._shared)

    def close(self) -> None:
        """Shut Ray down if this session started it."""
        if self._started and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = self._open = False
        self._shared_ref = None

    def describe(self) -> str:
        """One line: where the tasks run (for the progress output)."""
        self.start()
        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        where = f"the cluster at {self.address}" if self.address else "a local Ray"
        return (
            f"ray: {self.workers} CPUs on {len(nodes)} node"
            f"{'s' if len(nodes) != 1 else ''} ({where})"
        )

    @property
    def workers(self) -> int:
        """CPUs of the cluster (the tips harness sizes its blocks by them)."""
        self.start()
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def spread(
        self,
        fn: Callable[..., Any],
        jobs: Iterable[Any],
        on_result: Callable[[int, Any], None],
    ) -> int:
        """Run ``fn(job[, shared])`` for every job as a Ray task, `PER_CPU` in flight
        per CPU; ``on_result(index, result)`` as each ends (in the order they end).
        ``jobs`` is read lazily, as room opens. On any exception here or in
        ``on_result`` (Ctrl-C included) the tasks in flight are cancelled and the
        exception goes on; a task's own error is raised as itself. Returns the number
        of jobs run."""
        check_function(fn)
        self.start()
        ray = self.ray
        # SPREAD: every node gets tasks from the start; Ray's default fills the
        # driver's node first, which suits tasks that share data, not these
        # max_retries: a job whose worker died is run again (`TASK_RETRIES`)
        remote = ray.remote(fn).options(
            scheduling_strategy="SPREAD",
            max_retries=TASK_RETRIES,
            retry_exceptions=False,
        )
        extra = () if self._shared_ref is None else (self._shared_ref,)
        window = PER_CPU * self.workers
        pending: dict[Any, int] = {}
        source = enumerate(jobs)
        exhausted = False
        finished = 0
        try:
            while pending or not exhausted:
                while not exhausted and len(pending) < window:
                    item = next(source, None)
                    if item is None:
                        exhausted = True
                    else:
                        index, job = item
                        pending[remote.remote(check_wire(job), *extra)] = index
                if not pending:
                    break
                done, _ = ray.wait(list(pending), num_returns=1)
                index = pending.pop(done[0])
                on_result(index, _get(ray, done[0]))
                finished += 1
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        return finished

    def map(
        self,
        fn: Callable[..., Any],
        jobs: Sequence[Any],
        done: Callable[[int], None] | None = None,
    ) -> list[Any]:
        """``[fn(job[, shared]) for job in jobs]`` as Ray tasks; ``done(i)`` as each
        ends."""
        results: list[Any] = [None] * len(jobs)

        def keep(index: int, result: Any) -> None:
            results[index] = result
            if done is not None:
                done(index)

        self.spread(fn, jobs, keep)
        return results


def session_for(
    executor: str,
    address: str | None = None,
    init_kwargs: Mapping[str, Any] | None = None,
) -> RaySession | None:
    """The `RaySession` of an ``executor="ray"`` command (not started yet), or None
    for the local executor. Everything that can be told without starting Ray (the
    executor, an address without it, Ray missing, an address nothing answers at) is
    refused here in one line, so a command calls it before any other work."""
    check_executor(executor, address)
    return RaySession(address, init_kwargs) if executor == "ray" else None


def _get(ray, ref) -> Any:
    """``ray.get``, with a task's own exception raised as itself (Ray wraps it in a
    RayTaskError whose text holds the worker's traceback), and Ray's own failures (a
    node or raylet lost beyond Ray's retries) as one line."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        cause = getattr(err, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise
    except ray.exceptions.RayError as err:
        text = str(err).strip()
        first = text.splitlines()[0] if text else type(err).__name__
        raise DistributedError(
            f"the Ray cluster failed ({type(err).__name__}): {first}"
        ) from None


def chunk_size(items: int, workers: int, most: int = 50) -> int:
    """Items per job: about four jobs per worker (so the last ones end together), at
    most ``most``."""
    return max(1, min(most, -(-items // (4 * max(1, workers)))))


__all__ = [
    "EXECUTORS",
    "TASK_RETRIES",
    "DistributedError",
    "RaySession",
    "ShippedCheckpoint",
    "cached",
    "check_address",
    "check_executor",
    "check_function",
    "check_wire",
    "checkpoint_path",
    "chunk_size",
    "executor_of",
    "import_ray",
    "session_for",
    "ship_checkpoints",
    "worker_agent",
    "worker_env",
]
