"""Warm start by imitation: teach the learner a teacher bot's moves before self-play.

PPO from scratch spends most of a short budget discovering what the rule-based bots
already know (follow the trick economically, keep the top trumps, count the cards). A
warm start copies that knowledge first, as AlphaStar and many card-game agents do: the
teacher (any agent spec: ``heuristic``, ``solver``, ``pimc:4`` …) plays games against
itself, every decision it makes is recorded with the acting seat's observation and mask,
and the network's policy head is fitted to the teacher's moves (cross-entropy over the
masked logits) while its value head is fitted to what the deciding seat received
from that decision to the end (mean squared error; in games that pay as they go, like
Herzeln's tricks, the points already taken are not the state's value), times the run's
``reward_scale``. Self-play PPO then starts from that policy and that critic.

With ``exact`` the positions the game's exact solver can value (German Whist's stage 2,
where both hands are known) are labelled with *every* optimal move
(`parlour.agents.EXACT_MOVES`), and the policy is fitted to the probability of the set:
``-log sum(p(a) for a in optimal)``. The student then learns which cards keep the value,
not which of several equal cards the teacher happens to prefer, and never copies a
teacher's mistake there.

``noise`` plays a uniformly random legal move instead of the teacher's now and then, but
keeps the teacher's move as the label: the student then also sees positions the teacher
would not have reached, so one early mistake does not lead it into unknown territory
(the idea of DAgger, at no extra cost).

Collection runs in worker processes (``workers``); the teacher's time dominates for
search bots. Everything is seeded: the same arguments give the same data. With
``store`` every chunk of games is written to that directory as it is finished (one
compressed ``.npz`` per chunk, written atomically; the observations' 0/1 columns and the
masks and targets as packed bits, so 40,000 German Whist games take tens of MB instead
of GBs), and a later call with the same arguments reads the stored chunks instead of
playing them again: an interrupted collection loses at most the chunks in progress.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import signal
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from .. import agents as agents_mod
from .. import envs
from ..agents.base import Turn
from .pause import pause_point


@dataclass
class Demonstrations:
    """Teacher decisions: one row per decision."""

    observations: np.ndarray  # float32 [N, obs]
    masks: np.ndarray  # bool [N, actions]
    actions: np.ndarray  # int64 [N]: the teacher's move
    returns: np.ndarray  # float32 [N]: the deciding seat's return at the end
    games: int
    # bool [N, actions]: the moves the fit counts as right (the teacher's move, or every
    # optimal move where ``exact``); None means the teacher's move alone
    targets: np.ndarray | None = None
    exact: np.ndarray | None = None  # bool [N]: labelled by the exact solver
    # float32 [N]: the deciding seat's return still to come (its final return less
    # what it had received before deciding); None means the final return (all paid
    # at the end)
    to_go: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.targets is None:
            self.targets = np.zeros(self.masks.shape, dtype=bool)
            self.targets[np.arange(len(self.actions)), self.actions] = True
        if self.exact is None:
            self.exact = np.zeros(len(self.actions), dtype=bool)
        if self.to_go is None:
            self.to_go = np.asarray(self.returns, dtype=np.float32).copy()

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concatenate(parts: list[Demonstrations]) -> Demonstrations:
        return Demonstrations(
            np.concatenate([p.observations for p in parts]),
            np.concatenate([p.masks for p in parts]),
            np.concatenate([p.actions for p in parts]),
            np.concatenate([p.returns for p in parts]),
            sum(p.games for p in parts),
            np.concatenate([p.targets for p in parts]),
            np.concatenate([p.exact for p in parts]),
            np.concatenate([p.to_go for p in parts]),
        )


def _collect_chunk(
    args: tuple[str, dict[str, Any], str, int, int, float, bool],
) -> Any:
    env_name, env_options, teacher_spec, games, seed, noise, exact = args
    env = envs.make(env_name, **env_options)
    raw = env.unwrapped
    teacher = agents_mod.make(
        teacher_spec, env_name, seed=seed, env_options=env_options
    )
    optimal = agents_mod.exact_moves(env_name) if exact else None
    rng = np.random.default_rng(seed + 7)
    obs_rows: list[np.ndarray] = []
    mask_rows: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    received: list[float] = []  # the deciding seat's return before it decided
    solved: list[tuple[int, list[int]]] = []  # (row, optimal moves)
    for g in range(games):
        env.reset(seed=seed * 100_003 + g)
        teacher.reset(seed=seed * 100_003 + g)
        seats: list[int] = []
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = raw.agent_name_mapping[agent]
            mask = obs["action_mask"]
            turn = Turn(raw.game, raw.game_state, seat, obs["observation"], mask)
            label = int(teacher.act(turn))
            best = optimal(raw.game, raw.game_state) if optimal is not None else None
            if best is not None:
                solved.append((len(actions), best))
            obs_rows.append(obs["observation"])
            mask_rows.append(mask.astype(bool))
            actions.append(label)
            seats.append(seat)
            received.append(float(raw.game.returns(raw.game_state)[seat]))
            action = label
            if noise > 0 and rng.random() < noise:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
        # The engine's returns are each seat's total reward over the episode.
        totals = raw.game.returns(raw.game_state)
        returns.extend(float(totals[s]) for s in seats)
    data = Demonstrations(
        np.asarray(obs_rows, dtype=np.float32),
        np.asarray(mask_rows, dtype=bool),
        np.asarray(actions, dtype=np.int64),
        np.asarray(returns, dtype=np.float32),
        games,
        to_go=np.asarray(returns, dtype=np.float32)
        - np.asarray(received, dtype=np.float32),
    )
    for row, best in solved:
        data.targets[row] = False
        data.targets[row, best] = True
        data.exact[row] = True
    return data


CHUNK_FORMAT = 2  # 2: with each decision's return to come (``to_go``)


def save_chunk(path: Path, data: Demonstrations, meta: dict[str, Any]) -> None:
    """Write one chunk of demonstrations to ``path`` (``.npz``) atomically: the
    observation columns that hold only 0 and 1 as packed bits, the other columns as
    float32 (lossless), masks and targets as packed bits; ``meta`` (JSON) says how it
    was collected."""
    obs = data.observations
    binary = np.all((obs == 0) | (obs == 1), axis=0)
    arrays = {
        "meta": np.array(json.dumps({**meta, "format": CHUNK_FORMAT}, sort_keys=True)),
        "shape": np.array([len(data), obs.shape[1], data.masks.shape[1], data.games]),
        "binary": np.packbits(binary),
        "obs_bits": np.packbits(obs[:, binary].astype(bool), axis=1),
        "obs_rest": obs[:, ~binary].astype(np.float32),
        "masks": np.packbits(data.masks, axis=1),
        "targets": np.packbits(data.targets, axis=1),
        "exact": np.packbits(data.exact),
        "actions": data.actions.astype(np.int32),
        "returns": data.returns.astype(np.float32),
        "to_go": data.to_go.astype(np.float32),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        # Ctrl-C inside numpy's zip writer surfaces as zipfile's "Can't close the ZIP
        # file while there is an open writing handle" (a ValueError raised while the
        # interrupt was being handled): the user pressed Ctrl-C, so say that
        cause = err
        while cause is not None and not isinstance(cause, KeyboardInterrupt):
            cause = cause.__context__
        if cause is not None and cause is not err:
            raise KeyboardInterrupt from None
        raise


def load_chunk(path: Path) -> tuple[Demonstrations, dict[str, Any]]:
    """Read a chunk written by `save_chunk`: its demonstrations and its ``meta``.
    ValueError for a file that is not one (never unpickles)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            if meta.get("format") != CHUNK_FORMAT:
                raise ValueError(
                    f"chunk format {meta.get('format')!r}, this Parlour reads "
                    f"{CHUNK_FORMAT} (the games are played again)"
                )
            n, n_obs, n_actions, games = (int(x) for x in f["shape"])
            binary = np.unpackbits(f["binary"], count=n_obs).astype(bool)
            obs = np.empty((n, n_obs), dtype=np.float32)
            obs[:, binary] = np.unpackbits(
                f["obs_bits"], axis=1, count=int(binary.sum())
            )
            obs[:, ~binary] = f["obs_rest"]
            masks = np.unpackbits(f["masks"], axis=1, count=n_actions).astype(bool)
            targets = np.unpackbits(f["targets"], axis=1, count=n_actions)
            exact = np.unpackbits(f["exact"], count=n).astype(bool)
            actions = f["actions"].astype(np.int64)
            returns = f["returns"].astype(np.float32)
            to_go = f["to_go"].astype(np.float32)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(
            f"{path} is not a readable chunk of teacher games: {err}"
        ) from None
    data = Demonstrations(
        obs, masks, actions, returns, games, targets.astype(bool), exact, to_go
    )
    return data, meta


def collect(
    env_name: str,
    env_options: dict[str, Any],
    teacher: str,
    games: int,
    seed: int = 0,
    noise: float = 0.0,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    exact: bool = False,
    store: str | Path | None = None,
) -> Demonstrations:
    """``games`` games of the teacher against itself; every decision recorded. With
    ``exact`` the positions the env's exact solver values get every optimal move as
    their target (ValueError if the env has no `parlour.agents.EXACT_MOVES` entry).

    ``progress(n)`` is called with the number of games finished since the last call
    (stored chunks count as finished). ``store``: a directory that keeps every
    finished chunk, and from which a repeated call reads them back.
    """
    if games < 1:
        raise ValueError(f"games must be positive, got {games}")
    if not 0 <= noise < 1:
        raise ValueError(f"noise must lie in [0, 1), got {noise}")
    if workers < 1:
        raise ValueError(f"workers must be positive, got {workers}")
    agents_mod.make(teacher, env_name, seed=0, env_options=env_options)  # bad spec
    if exact:
        agents_mod.exact_moves(env_name)  # an env without solver labels
    # chunks (and so their seeds) do not depend on the number of workers
    chunk = max(1, min(50, math.ceil(games / 8)))
    jobs = []
    done = 0
    for i in range(math.ceil(games / chunk)):
        n = min(chunk, games - done)
        jobs.append(
            (env_name, dict(env_options), teacher, n, seed * 1000 + i, noise, exact)
        )
        done += n
    parts: dict[int, Demonstrations] = {}
    keep = Path(store) if store is not None else None
    if keep is not None:
        for i, job in enumerate(jobs):
            stored = _stored_chunk(keep, i, job)
            if stored is not None:
                parts[i] = stored
                if progress is not None:
                    progress(job[3])
    todo = [(i, job) for i, job in enumerate(jobs) if i not in parts]

    def finished(i: int, result: Demonstrations) -> None:
        parts[i] = result
        if keep is not None:
            save_chunk(_chunk_path(keep, i), result, _chunk_meta(jobs[i]))
            pause_point("teacher games")
        if progress is not None:
            progress(jobs[i][3])

    if workers == 1 or len(todo) <= 1:
        for i, job in todo:
            finished(i, _collect_chunk(job))
    else:
        # fork keeps the parent's imports; every chunk is seeded, so the order in
        # which workers finish changes nothing.
        ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ctx.Pool(workers, initializer=_worker_init) as p:
            results = p.imap(_collect_chunk, [job for _, job in todo])
            for (i, _), result in zip(todo, results, strict=True):
                finished(i, result)
    return Demonstrations.concatenate([parts[i] for i in range(len(jobs))])


def _worker_init() -> None:
    """A collecting worker: one torch thread, and Ctrl-C left to the parent, which
    keeps the finished chunks and stops the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def _chunk_path(store: Path, index: int) -> Path:
    return store / f"games_{index:05d}.npz"


def _chunk_meta(job: tuple) -> dict[str, Any]:
    env_name, env_options, teacher, games, seed, noise, exact = job
    return {
        "env": env_name,
        "env_options": env_options,
        "teacher": teacher,
        "games": games,
        "seed": seed,
        "noise": noise,
        "exact": exact,
    }


def _stored_chunk(store: Path, index: int, job: tuple) -> Demonstrations | None:
    """The stored chunk ``index`` when it was collected with exactly ``job``'s
    settings, else None (it is then played again and overwritten)."""
    path = _chunk_path(store, index)
    if not path.is_file():
        return None
    try:
        data, meta = load_chunk(path)
    except ValueError:
        return None
    want = json.loads(json.dumps({**_chunk_meta(job), "format": CHUNK_FORMAT}))
    return data if meta == want else None


def stored_games(store: str | Path) -> int:
    """Teacher games kept in ``store`` in this Parlour's chunk format (0 when there is
    none)."""
    total = 0
    for path in sorted(Path(store).glob("games_*.npz")):
        try:
            with np.load(path, allow_pickle=False) as f:
                if json.loads(str(f["meta"])).get("format") == CHUNK_FORMAT:
                    total += int(f["shape"][3])
        except (OSError, KeyError, ValueError, IndexError, zipfile.BadZipFile):
            continue
    return total


def clean_temporary(store: str | Path) -> list[Path]:
    """Remove the temporary files a killed `save_chunk` left in ``store``."""
    removed = []
    for path in Path(store).glob(".games_*.npz.*"):
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


@dataclass
class FitReport:
    """How well the student copies the teacher, on held-out decisions."""

    epochs: int
    train_decisions: int
    held_out_decisions: int
    agreement: float  # fraction of held-out decisions where argmax is a target move
    policy_loss: float
    value_loss: float
    # held-out decisions labelled by the exact solver, and the fraction of them where
    # argmax is an optimal move (None without such decisions)
    exact_decisions: int = 0
    exact_agreement: float | None = None
    # the same measure on as many training decisions: far above `agreement`, the
    # network memorises its teacher's games instead of generalising
    train_agreement: float | None = None


@runtime_checkable
class ImitationPolicy(Protocol):
    """The network `fit` and `policy_pass` train: an actor-critic ``torch.nn.Module``
    (its ``parameters`` and ``train``) with masked log-probabilities and values. Every
    backend's network is one: the sb3 backend's ``MaskedMlpPolicy``, the batch
    backend's ``ActorCritic``, the rllib backend's ``MaskedPPOTorchRLModule``."""

    def parameters(self, recurse: bool = True) -> Iterator[torch.nn.Parameter]:
        """The weights the fit's optimiser steps."""
        ...

    def train(self, mode: bool = True) -> Any:
        """Training mode on or off."""
        ...

    def masked_log_probs(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """Log-probabilities ``(N, A)`` of the policy restricted to the legal actions
        (``masks``, bool ``(N, A)``), normalised over them; an illegal action's is
        about -1e8 (SB3's ``MaskableCategorical``)."""
        ...

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's values, ``(N,)`` or ``(N, 1)``."""
        ...


def _target_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``-log`` of the probability the masked policy gives the target set, per row
    (the cross-entropy when the set is one move). ``logits`` are the masked,
    normalised log-probabilities (`ImitationPolicy.masked_log_probs`)."""
    return -torch.logsumexp(logits.masked_fill(~targets, -torch.inf), dim=1)


def fit(
    policy: ImitationPolicy,
    data: Demonstrations,
    epochs: int,
    batch_size: int = 512,
    learning_rate: float = 1e-3,
    vf_coef: float = 0.5,
    seed: int = 0,
    held_out: float = 0.05,
    progress: Callable[[int, float], None] | None = None,
    value_scale: float = 1.0,
) -> FitReport:
    """Fit a backend's network (`ImitationPolicy`) to the demonstrations (in place).

    Negative log-probability of each decision's target moves under the masked policy
    (the cross-entropy on the teacher's move, or on the set of optimal moves where the
    exact solver labelled it) plus ``vf_coef`` times the value head's squared error on
    the returns still to come times ``value_scale`` (the run's ``reward_scale``, so
    that the critic starts in the units PPO trains it in); Adam with its own state
    (PPO's optimiser is left untouched).
    ``progress(epoch, loss)`` after each epoch.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be positive, got {epochs}")
    n = len(data)
    if n < 2:
        raise ValueError("need at least two demonstrations to fit")
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    n_test = max(1, int(n * held_out))
    test, train = order[:n_test], order[n_test:]
    obs = torch.from_numpy(data.observations)
    masks = torch.from_numpy(data.masks)
    targets = torch.from_numpy(data.targets)
    returns = torch.from_numpy(data.to_go * np.float32(value_scale))
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.train(True)
    for epoch in range(epochs):
        rng.shuffle(train)
        total = 0.0
        for start in range(0, len(train), batch_size):
            idx = torch.from_numpy(train[start : start + batch_size])
            logits = policy.masked_log_probs(obs[idx], masks[idx])
            policy_loss = _target_nll(logits, targets[idx]).mean()
            values = policy.predict_values(obs[idx]).flatten()
            value_loss = torch.nn.functional.mse_loss(values, returns[idx])
            loss = policy_loss + vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            total += float(loss.detach()) * len(idx)
        if progress is not None:
            progress(epoch + 1, total / max(1, len(train)))
    policy.train(False)
    with torch.no_grad():
        idx = torch.from_numpy(test)
        logits = policy.masked_log_probs(obs[idx], masks[idx])
        hits = targets[idx].gather(1, logits.argmax(dim=1, keepdim=True)).flatten()
        agreement = float(hits.float().mean())
        policy_loss = float(_target_nll(logits, targets[idx]).mean())
        values = policy.predict_values(obs[idx]).flatten()
        value_loss = float(torch.nn.functional.mse_loss(values, returns[idx]))
        exact = torch.from_numpy(data.exact[test])
        n_exact = int(exact.sum())
        exact_agreement = float(hits[exact].float().mean()) if n_exact else None
        seen = torch.from_numpy(rng.choice(train, size=min(n_test, len(train))))
        picked = policy.masked_log_probs(obs[seen], masks[seen]).argmax(
            dim=1, keepdim=True
        )
        train_agreement = float(targets[seen].gather(1, picked).float().mean())
    return FitReport(
        epochs,
        len(train),
        len(test),
        agreement,
        policy_loss,
        value_loss,
        n_exact,
        exact_agreement,
        train_agreement,
    )


def fit_warm_start(
    policy: ImitationPolicy,
    data: Demonstrations,
    config: Any,
    progress: Callable[[int, float], None] | None,
    batch_size: int | None = None,
) -> FitReport:
    """`fit` with a run's warm-start settings (a `TrainConfig`: epochs, learning rate,
    ``vf_coef``, seed, ``reward_scale``), the warm start of every backend; the
    minibatch is the config's ``batch_size`` unless ``batch_size`` is given."""
    return fit(
        policy,
        data,
        config.warm_start_epochs,
        batch_size=config.batch_size if batch_size is None else batch_size,
        learning_rate=config.warm_start_lr,
        vf_coef=config.vf_coef,
        seed=config.seed,
        progress=progress,
        value_scale=config.reward_scale,
    )


def policy_pass(
    policy: ImitationPolicy,
    optimizer: torch.optim.Optimizer,
    observations: np.ndarray,
    masks: np.ndarray,
    targets: np.ndarray,
    batch_size: int,
    rng: np.random.Generator,
) -> float:
    """One shuffled pass of the target-set loss over the given decisions, in minibatches
    of ``batch_size``, stepping ``optimizer`` (the policy head only: the value head has
    no target here). Returns the mean loss. Self-play uses it for the learner's own
    solver-labelled decisions (``exact_aux_fraction``)."""
    n = len(observations)
    obs = torch.as_tensor(observations, dtype=torch.float32)
    legal = torch.as_tensor(masks, dtype=torch.bool)
    goal = torch.as_tensor(targets, dtype=torch.bool)
    order = rng.permutation(n)
    total = 0.0
    policy.train(True)
    for start in range(0, n, batch_size):
        idx = torch.from_numpy(order[start : start + batch_size])
        loss = _target_nll(policy.masked_log_probs(obs[idx], legal[idx]), goal[idx])
        loss = loss.mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        total += float(loss.detach()) * len(idx)
    policy.train(False)
    return total / max(1, n)


__all__ = [
    "Demonstrations",
    "FitReport",
    "ImitationPolicy",
    "clean_temporary",
    "collect",
    "fit",
    "load_chunk",
    "policy_pass",
    "save_chunk",
    "stored_games",
]
