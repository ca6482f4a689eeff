"""Helpers the per-game test files share (imported as ``helpers``: pytest puts this
folder on ``sys.path``, as it does for ``ray_cluster``)."""

from __future__ import annotations

import importlib
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from parlour.agents.base import Turn
from parlour.envs.core.engine import TERMINAL
from parlour.training.arena import play_game

#: a German Whist training run of seconds: 256 steps in rollouts of 2 x 64, a 16-16
#: net, one epoch, a snapshot, checkpoint and 2-game evaluation every 128 steps
TINY_TRAINING: dict[str, Any] = {
    "env": "german_whist_v0",
    "total_timesteps": 256,
    "n_envs": 2,
    "n_steps": 64,
    "batch_size": 64,
    "n_epochs": 1,
    "net_arch": [16, 16],
    "opponents": {"self": 0.5, "random": 0.5},
    "snapshot_every": 128,
    "checkpoint_every": 128,
    "eval_every": 128,
    "eval_games": 2,
    "eval_opponents": ["random"],
    "tensorboard": False,
}


def tiny_training(
    total_timesteps: int | None = None, every: int | None = None, **changes: Any
) -> dict[str, Any]:
    """`TINY_TRAINING` with some keys changed: the budget, ``every`` (snapshots,
    checkpoints and evaluations at that interval) and any other key."""
    out = {**TINY_TRAINING, **changes}
    if total_timesteps is not None:
        out["total_timesteps"] = total_timesteps
    if every is not None:
        out.update(snapshot_every=every, checkpoint_every=every, eval_every=every)
    return out


def hands_of(text: str) -> list[list[str]]:
    """Hands written as card names, hands separated by ``|``: ``"AS 2H | KD QD"`` is
    ``[["AS", "2H"], ["KD", "QD"]]``."""
    return [hand.split() for hand in text.split("|")]


def play_turns(
    env: Any, choose: Callable[[Turn], int], seed: int | None = None
) -> None:
    """One episode of ``env`` (reset with ``seed``) in which ``choose(turn)`` picks
    every seat's action; the env raises on an illegal one."""
    chooser = SimpleNamespace(act=choose)
    play_game(env, [chooser] * env.unwrapped.game.num_players, seed)


def random_decisions(game: Any, rng: np.random.Generator, games: int) -> Iterator[Any]:
    """The decision states of ``games`` random games of the engine ``game``: chance is
    sampled, and after each state is yielded a uniformly random legal action is
    applied to it."""
    for _ in range(games):
        state = game.new_state()
        while game.advance_chance(state, rng) != TERMINAL:
            yield state
            legal = game.legal_actions(state)
            game.apply(state, legal[int(rng.integers(len(legal)))])


def swap_lowest_cards(state: Any, a: int, b: int) -> Any:
    """A clone of ``state`` in which seats ``a`` and ``b`` have swapped the lowest card
    id of their hands (hands as bitmasks): what neither of them shows."""
    other = state.clone()
    ca = state.hands[a] & -state.hands[a]
    cb = state.hands[b] & -state.hands[b]
    other.hands[a] ^= ca | cb
    other.hands[b] ^= ca | cb
    return other


def record_engine_steps(env: Any) -> list[tuple[Any, Any, Any]]:
    """Record every later step of a `BatchSelfPlay` ``env``: a list that gets
    ``(learner rows, rewards, dones)`` per engine step."""
    log = []
    real_step = env.step

    def step(actions):
        learner = env.turn.learner.clone()
        turn, rewards, dones = real_step(actions)
        log.append((learner, rewards.clone(), dones.clone()))
        return turn, rewards, dones

    env.step = step
    return log


def as_from_a_terminal() -> None:
    """``preexec_fn`` for a child a test interrupts with SIGINT: the default SIGINT
    disposition, as a shell gives a foreground command. A test run started in the
    background of a non-interactive shell (``make test &``) ignores SIGINT, and its
    children would inherit that and never see the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def jit_on(module: ModuleType) -> Iterator[ModuleType]:
    """The numba kernel ``module`` reloaded with numba's JIT on (``conftest.py`` turns
    it off for the suite), so compiled (or loaded from numba's cache); reloaded as
    the rest of the suite expects it afterwards."""
    import numba
    import pytest

    mp = pytest.MonkeyPatch()
    mp.setattr(numba.config, "DISABLE_JIT", False)
    try:
        module = importlib.reload(module)
        assert module.compiled()
        yield module
    finally:
        mp.undo()
        importlib.reload(module)


def check_backend_choice(
    monkeypatch: Any, solver: Callable[..., Any], search: Callable[[], Any], env: str
) -> None:
    """What every trick game's compiled search shares: ``PARLOUR_JIT=0`` picks pure
    Python, ``1`` or unset the compiled search (numba's JIT on); ``solver(backend)``'s
    argument overrides the environment; anything else is a one-line error, from
    ``search()`` and when a bot of ``env`` is made (before any game)."""
    import pytest

    from parlour import agents
    from parlour.agents.solver.backend import JIT_ENV

    monkeypatch.setenv(JIT_ENV, "0")
    assert solver().backend == "python"
    assert solver("auto").backend == "numba"
    monkeypatch.setenv(JIT_ENV, "1")
    assert solver().backend == "numba"
    assert solver("python").backend == "python"
    monkeypatch.delenv(JIT_ENV)
    assert solver().backend == "numba"
    with pytest.raises(ValueError, match="backend must be one of"):
        solver("cuda")
    monkeypatch.setenv(JIT_ENV, "yes")
    with pytest.raises(ValueError, match="PARLOUR_JIT must be 0 or 1"):
        search()
    for kind in ("solver", "pimc:4", "expert"):
        with pytest.raises(ValueError, match="PARLOUR_JIT must be 0 or 1"):
            agents.make(kind, env, seed=0)


def check_without_numba(
    monkeypatch: Any, kernel: str, solver: Callable[[str], Any], value: Callable
) -> None:
    """Where numba does not import (the kernel module ``kernel`` not loaded yet), a
    ``solver("auto")`` searches in pure Python (``value(solver)``) and asking for
    numba is a one-line error saying what to do."""
    import sys

    import pytest

    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, kernel, raising=False)
    auto = solver("auto")
    assert value(auto) >= 0
    assert auto.backend == "python"
    with pytest.raises(ImportError, match=r"install numba, or set PARLOUR_JIT=0"):
        value(solver("numba"))


def pimc_logs(monkeypatch: Any, env_name: str, option_sets: list[dict]) -> list[list]:
    """``pimc:3`` on every seat of one game of ``env_name`` with each of
    ``option_sets`` (seed 7), with ``PARLOUR_JIT=1`` and then ``0``: for each, the
    (seat, action, mean values) of every decision."""
    from parlour import agents, envs
    from parlour.agents.solver.backend import JIT_ENV

    runs = []
    for jit in ("1", "0"):
        monkeypatch.setenv(JIT_ENV, jit)
        log: list = []
        for options in option_sets:
            env = envs.make(env_name, **options)
            n = env.unwrapped.game.num_players
            bots = [agents.make("pimc:3", env_name, seed=s) for s in range(n)]

            def choose(turn: Turn, bots: list = bots, log: list = log) -> int:
                action = bots[turn.seat].act(turn)
                log.append((turn.seat, action, dict(bots[turn.seat].last_values)))
                return action

            play_turns(env, choose, 7)
            env.close()
        runs.append(log)
    return runs


def tiny_table_drops(
    kernels: ModuleType, solver: Any, check: Callable[..., Any], *args: Any
) -> int:
    """Give the compiled ``solver`` (made with a limit of 40 entries, so not on the
    shared table of the kernel module ``kernels``) a table of 8 slots of its own, run
    ``check(*args)``, and check that the table grew, up to 128 slots (twice the limit, a
    power of two), and was cleared at least once; the entries it dropped."""
    kernel = solver._kernel
    assert kernel.table is not kernels.shared_table()
    kernel.table = kernels.Table(8)
    kernel.stats[kernels.GEN] = kernel.table.generation()  # its first: 1
    check(*args)
    assert 8 < kernel.table.slots <= 128
    assert kernel.stats[kernels.GEN] > 1
    return kernel.dropped


def shipped_copy(name: str, out: Any, canonical_form: Any = None) -> str:
    """The shipped model ``name`` saved at ``out`` with its manifest's
    ``canonical_form`` set to the value given, or left out (None: a network that reads
    its positions as they are, a source for the fits that rename suits at random,
    which a canonical network refuses)."""
    from parlour.training import checkpoint as ckpt_io
    from parlour.training.dagger import _DROPPED
    from parlour.training.pretrained import named

    loaded = ckpt_io.load(named(name))
    drop = (*_DROPPED, ckpt_io.CANONICAL_FORM)
    body = {k: v for k, v in loaded.manifest.items() if k not in drop}
    if canonical_form is not None:
        body[ckpt_io.CANONICAL_FORM] = canonical_form
    return str(ckpt_io.save(out, {"policy": loaded.tensors["policy"]}, body))
