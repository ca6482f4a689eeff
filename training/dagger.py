"""DAgger with a solver as teacher: fit a trained network to the solver's play on
the positions its own play reaches.

A network imitated from a teacher's games learns the teacher's positions; the
positions its own play leads to are others, and there it errs more (German Whist: the
shipped agent finds an optimal card in 99.4% of the teacher's held-out stage-2
decisions but in 95% of the critical ones it reaches itself). DAgger (Ross, Gordon and
Bagnell, AISTATS 2011) closes that gap: play the current network, label the positions
it reached with the expert's answers, fit the network to everything labelled so far,
and repeat. The expert (`Teacher`, ``teacher``) is the env's exact solver
(``exact``: `parlour.agents.exact_moves`, German Whist's stage 2, where both hands are
known), which labels each such position with *every* optimal move, or a trick game's
PIMC bot (``solver``, ``pimc:N``: `parlour.agents.solver.tricks.PIMCAgent.search`),
which labels the positions where it searches with every move of the best mean value
over its sampled deals. The network is fitted to the probability of that set
(``-log sum(p(a) for a in best)``, the imitation warm start's loss,
`training.imitation`).

Each round

1. plays ``games`` games of the current network (greedy) against the ``opponents``,
   in turn (any agent spec, or ``self``: the network in every seat), the network
   taking one side (a seat or a partnership, `training.arena.seatings`) and each
   opponent's games going round the sides; game ``i`` of round ``r`` is dealt from
   the ``i``-th seed of ``SeedSequence([seed, r])``, below
   `training.selfplay.TRAIN_SEED_LIMIT`, so no held-out evaluation (``parlour
   eval``, ``parlour arena``) deals one of them;
2. keeps the network's *decisive* teacher-valued decisions (the best moves are not
   all the legal ones: the only ones the set loss can teach; counted as
   ``solver_valued`` and ``decisive``) and a share ``anchor_fraction`` of its other
   decisions, where the teacher says nothing;
3. fits the network for ``epochs`` passes over every round's decisions so far (the
   DAgger aggregate): the set loss on the decisive ones, plus ``anchor`` times the
   KL divergence from the *source* network's policy on the others, which holds the
   play the teacher cannot label (German Whist's stage 1; Forty-Fives' bids, robbing,
   trumps and discards) where it was;
4. writes the actor as a checkpoint, ``RUN/checkpoints/round-N``, and points
   ``RUN/latest.json`` at it, so ``parlour eval RUN`` and ``ckpt:RUN`` play the latest
   round; ``RUN/rounds.json`` records each round's figures, among them the share of
   the network's decisive decisions it got wrong *before* the round's fit: the error
   rate of its own play, measured for free on positions it has not trained on.

The checkpoint holds the actor only (the critic and the optimiser are PPO's, and this
fit touches neither), like a shipped model (`training.pretrained`), so it exports as
one. An interrupted run (Ctrl-C) keeps its finished rounds and the round data
(``RUN/data/round-N.npz``); ``resume=True`` continues it to ``rounds`` rounds with the
settings it was started with. Every argument is checked before anything is written.
``python -m parlour.training.dagger --help`` is the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .. import agents as agents_mod
from .. import envs
from ..agents.base import Agent, Turn
from ..progress import progress_bar
from . import checkpoint as ckpt_io
from .arena import play_game, seatings, teams_of
from .imitation import _target_nll, _worker_init
from .policy import (
    ACTIVATIONS,
    NumpyPolicy,
    PolicyAgent,
    actor_state,
    canonicalizer,
    check_canonical_form,
    make_policy,
)
from .policy import suit_renamings as index_renamings
from .selfplay import TRAIN_SEED_LIMIT

SELF = "self"
EXACT = "exact"
EXPERT = "expert"
HELD_OUT = 0.05  # share of each round's decisive rows held out of every fit
SETTINGS = "dagger.json"
ROUNDS = "rounds.json"
# manifest fields the source's checkpoint had that the new one must not repeat; how
# a model plays (suit_average) was measured for the source's network, not the new one
_DROPPED = (
    *("format", "format_version", "weights_sha256", "versions", "manifest_sha256"),
    *("pretrained", "snapshots", "env_version", ckpt_io.SUIT_AVERAGE),
)


@dataclass(frozen=True)
class Settings:
    """What a DAgger run does; stored in ``RUN/dagger.json`` and fixed on resume."""

    source: str
    """the network to start from: a checkpoint, a run directory, or
    ``pretrained:NAME`` (a shipped model, e.g. ``pretrained:german_whist_v0``)"""
    rounds: int = 3
    """rounds of play, label and fit"""
    games: int = 2000
    """games the network plays each round"""
    opponents: tuple[str, ...] = ("heuristic", SELF)
    """the network's opponents, one game each in turn (``self``: the network)"""
    epochs: int = 3
    """passes over the aggregated decisions each round"""
    learning_rate: float = 1e-4
    """Adam's step size (a fine-tune of a trained network)"""
    batch_size: int = 256
    """decisions per minibatch"""
    anchor: float = 1.0
    """weight of the KL divergence to the source network on unlabelled decisions"""
    anchor_fraction: float = 0.25
    """share of the unlabelled decisions kept for the anchor"""
    seed: int = 0
    """seeds the deals, the shuffles and the kept share"""
    teacher: str = EXACT
    """who labels the positions: ``exact`` (the env's exact solver, every optimal
    move: German Whist's stage 2), ``expert`` (expert iteration, German Whist: where
    the ``expert`` agent's search over the network's own move plays another, the moves
    it plays; stage 2 exactly), or a PIMC bot, ``solver`` or ``pimc:N``, of a trick
    game with one (Forty-Fives, Fünfzehnern, Herzeln: every move of the best mean
    value over its sampled deals, where the bot searches)"""
    workers: int = 1
    """processes that play and label the games"""
    suit_symmetry: bool = False
    """fit each decisive row under a random renaming of the four suits (German
    Whist's rules treat them alike, so the renamed row's optimal moves are the renamed
    ones): 24 positions for each one labelled"""
    canonical_form: bool = False
    """the network reads positions in their canonical form (the env record's
    ``canonical_form``; German Whist's stage 2: ranks compressed, suits in order): it
    plays and is fitted that way, and its checkpoints say so. A source that reads them
    so already implies it. It replaces ``suit_symmetry``, whose renamings it undoes"""


@dataclass
class RoundData:
    """One round's kept decisions."""

    observations: np.ndarray  # float32 [N, obs]
    masks: np.ndarray  # bool [N, actions]
    targets: np.ndarray  # bool [N, actions]: the optimal moves (decisive rows)
    decisive: np.ndarray  # bool [N]: labelled by the solver, else an anchor row
    stats: dict[str, int]

    @staticmethod
    def concatenate(parts: Sequence[RoundData]) -> RoundData:
        """The rows of several parts in order; their counts summed."""
        stats: dict[str, int] = {}
        for p in parts:
            for k, v in p.stats.items():
                stats[k] = stats.get(k, 0) + v
        return RoundData(
            np.concatenate([p.observations for p in parts]),
            np.concatenate([p.masks for p in parts]),
            np.concatenate([p.targets for p in parts]),
            np.concatenate([p.decisive for p in parts]),
            stats,
        )

    def save(self, path: Path) -> None:
        """Write the rows (compressed) atomically."""
        tmp = path.with_name(f".{path.name}.part")
        with open(tmp, "wb") as f:
            np.savez_compressed(
                f,
                observations=self.observations,
                masks=self.masks,
                targets=self.targets,
                decisive=self.decisive,
                stats=json.dumps(self.stats),
            )
        os.replace(tmp, path)

    @staticmethod
    def load(path: Path) -> RoundData:
        """Read what `save` wrote."""
        with np.load(path) as f:
            return RoundData(
                f["observations"],
                f["masks"],
                f["targets"],
                f["decisive"],
                json.loads(str(f["stats"])),
            )


def canonical_rows(data: RoundData, env_name: str, game: Any) -> RoundData:
    """The rows with every observation in its canonical form (the env record's
    ``canonical_form``) and the masks and targets renamed with it; the stats as they
    were."""
    observations, index = canonicalizer(env_name, game)(data.observations)
    return RoundData(
        observations,
        np.take_along_axis(data.masks, index, axis=1),
        np.take_along_axis(data.targets, index, axis=1),
        data.decisive,
        data.stats,
    )


class Actor(torch.nn.Module):
    """An MLP actor with `actor_state`'s layers: masked log-probabilities to fit."""

    def __init__(self, state: dict[str, np.ndarray], activation: str) -> None:
        super().__init__()
        numpy_policy = NumpyPolicy(state, activation)  # checks the keys
        self.activation = activation
        layers: list[torch.nn.Module] = []
        for w, b in numpy_policy.layers:
            layer = torch.nn.Linear(w.shape[0], w.shape[1])
            with torch.no_grad():
                layer.weight.copy_(torch.from_numpy(w.T.copy()))
                layer.bias.copy_(torch.from_numpy(np.asarray(b).copy()))
            layers += [
                layer,
                torch.nn.ReLU() if activation == "relu" else torch.nn.Tanh(),
            ]
        self.hidden = torch.nn.Sequential(*layers)
        w, b = numpy_policy.out
        self.head = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            self.head.weight.copy_(torch.from_numpy(w.T.copy()))
            self.head.bias.copy_(torch.from_numpy(np.asarray(b).copy()))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Unmasked logits."""
        return self.head(self.hidden(obs))

    def masked_log_probs(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """Log-probabilities over the legal actions (an illegal one's about -1e8)."""
        logits = self(obs).masked_fill(~masks, -1e8)
        return torch.log_softmax(logits, dim=1)

    def state(self) -> dict[str, np.ndarray]:
        """The weights under `actor_state`'s names (torch's layout), as numpy."""
        linear = [m for m in self.hidden if isinstance(m, torch.nn.Linear)]
        pairs = [
            (m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
            for m in linear
        ]
        head = (
            self.head.weight.detach().numpy().copy(),
            self.head.bias.detach().numpy().copy(),
        )
        return actor_state(pairs, head)


# --- play and label -------------------------------------------------------------------
def _pimc_bot(spec: str, env_name: str, env_options: dict[str, Any]) -> Any:
    """The env's PIMC bot of ``spec`` (`parlour.agents.solver.tricks.PIMCAgent`, whose
    `search` gives every move's value), or None where its search bot is another kind
    or it has none; a bad ``pimc:N`` is the bot factory's one line."""
    from ..agents.solver.tricks import PIMCAgent

    try:
        bot = agents_mod.make(spec, env_name, seed=0, env_options=env_options)
    except ValueError:
        if spec.startswith("pimc:") and _pimc_bot("solver", env_name, env_options):
            raise  # the env has the teacher: the samples are what is wrong
        return None
    return bot if isinstance(bot, PIMCAgent) else None


class Teacher:
    """The labeller of a teacher spec (`Settings.teacher`): called on a turn and the
    network's move there, the best moves (sorted), or None where it knows nothing.
    ValueError (one line) for a spec the env has no such teacher for."""

    def __init__(self, spec: str, env_name: str, env_options: dict[str, Any]):
        self.bot: Any = None
        self.search: Any = None
        if spec == EXPERT:
            record = envs.record(env_name)
            if not record.expert_labels:
                having = [r.name for r in envs.records() if r.expert_labels]
                raise ValueError(
                    f"teacher {EXPERT!r} labels {', '.join(having)}, not {env_name}"
                )
            self.search = record.load("expert_labels")
            self.rng = np.random.default_rng(0)
            return
        if spec == EXACT:
            try:
                self.optimal = agents_mod.exact_moves(env_name)
            except ValueError as err:
                pimc = _pimc_bot("solver", env_name, env_options) is not None
                raise ValueError(
                    f"{err}; its teacher: solver or pimc:N" if pimc else str(err)
                ) from None
            return
        if spec.split(":", 1)[0] not in ("solver", "pimc"):
            raise ValueError(
                f"teacher must be {EXACT}, {EXPERT}, solver or pimc:N, got {spec!r}"
            )
        self.bot = _pimc_bot(spec, env_name, env_options)
        if self.bot is None:
            having = [n for n in envs.names() if _pimc_bot("solver", n, {}) is not None]
            raise ValueError(
                f"teacher {spec!r}: the PIMC teacher labels "
                f"{', '.join(having)}, not {env_name}"
            )

    def reset(self, seed: int) -> None:
        """Reseed a search teacher's samples (each game's labels depend on its deal)."""
        if self.bot is not None:
            self.bot.reset(seed=seed)
        if self.search is not None:
            self.rng = np.random.default_rng(seed)

    def __call__(self, turn: Turn, move: int) -> list[int] | None:
        if self.search is not None:
            return self.search(turn.game, turn.state, turn.seat, move, self.rng)
        if self.bot is None:
            return self.optimal(turn.game, turn.state)
        values = self.bot.search(turn)
        if values is None:
            return None
        top = max(values.values())
        return sorted(a for a, v in values.items() if v >= top - 1e-9)


class _Recorder(Agent):
    """The network as a player that keeps its decisions: the decisive teacher-valued
    ones with their best moves, a share of the unlabelled ones for the anchor."""

    def __init__(
        self,
        policy: PolicyAgent,
        teacher: Teacher,
        anchor_fraction: float,
        seed: int,
    ):
        self.policy, self.spec = policy, policy.spec
        self.optimal = teacher
        self.anchor_fraction = anchor_fraction
        self.rng = np.random.default_rng(seed)
        self.rows: tuple[list, list, list, list] = ([], [], [], [])
        self.stats = dict.fromkeys(
            ("games", "decisions", "solver_valued", "decisive", "missed"), 0
        )

    def act(self, turn: Turn) -> int:
        action = int(self.policy.act(turn))
        mask = turn.mask.astype(bool)
        self.stats["decisions"] += 1
        best = self.optimal(turn, action)
        if best is None:
            if self.rng.random() < self.anchor_fraction:
                self._keep(turn.observation, mask, np.zeros_like(mask), False)
        else:
            self.stats["solver_valued"] += 1
            if len(best) < int(mask.sum()):
                self.stats["decisive"] += 1
                self.stats["missed"] += action not in best
                target = np.zeros_like(mask)
                target[best] = True
                self._keep(turn.observation, mask, target, True)
        return action

    def _keep(
        self, obs: np.ndarray, mask: np.ndarray, target: np.ndarray, decisive: bool
    ) -> None:
        for rows, value in zip(self.rows, (obs, mask, target, decisive), strict=True):
            rows.append(value)

    def data(self, observation_size: int, num_actions: int) -> RoundData:
        """The kept rows."""
        obs, masks, targets, decisive = self.rows
        return RoundData(
            np.asarray(obs, dtype=np.float32).reshape(-1, observation_size),
            np.asarray(masks, dtype=bool).reshape(-1, num_actions),
            np.asarray(targets, dtype=bool).reshape(-1, num_actions),
            np.asarray(decisive, dtype=bool),
            self.stats,
        )


def _play_chunk(args: tuple) -> RoundData:
    """Play one chunk of games of the network and keep its decisions (a worker job):
    ``args`` is (env name, env options, the network's weights, activation, whether it
    reads canonical positions, jobs, anchor fraction, seed, teacher spec); a job is
    (deal seed, the seats the network takes, the opponents' spec)."""
    env_name, env_options, state, activation, canonical, *rest = args
    jobs, anchor_fraction, seed, teach = rest
    env = envs.make(env_name, **env_options)
    game = env.unwrapped.game
    network = make_policy(state, activation, env_name, game, canonical)
    policy = PolicyAgent(network, "dagger")
    teacher = Teacher(teach, env_name, env_options)
    learner = _Recorder(policy, teacher, anchor_fraction, seed)
    opponents: dict[str, Agent] = {}
    for game_seed, mine, spec in jobs:
        teacher.reset(game_seed + 104729)
        if spec == SELF:
            players: list[Agent] = [learner] * len(mine)
        else:
            if spec not in opponents:
                opponents[spec] = agents_mod.make(
                    spec, env_name, seed=seed, env_options=env_options
                )
            other = opponents[spec]
            other.reset(seed=game_seed + 7919)
            players = [learner if m else other for m in mine]
        play_game(env, players, seed=game_seed)
        learner.stats["games"] += 1
    env.close()
    return learner.data(game.observation_size, game.num_actions)


def round_seeds(seed: int, round_index: int, games: int) -> list[int]:
    """The deal seeds of one round: below `TRAIN_SEED_LIMIT`, where no held-out
    evaluation deals."""
    raw = np.random.SeedSequence([seed, round_index]).generate_state(games, np.uint32)
    return [int(s) % TRAIN_SEED_LIMIT for s in raw]


def play_round(
    env_name: str,
    env_options: dict[str, Any],
    state: dict[str, np.ndarray],
    activation: str,
    settings: Settings,
    round_index: int,
    progress: bool = False,
) -> RoundData:
    """Play and label one round's games (`Settings`) with the network ``state``; a
    progress bar of the games on stderr with ``progress``. The network takes one
    side (a seat, or a partnership: `training.arena.seatings`) and the opponent every
    other seat; the opponents take turns game by game, and each one's games go round
    the sides."""
    seeds = round_seeds(settings.seed, round_index, settings.games)
    game = envs.make(env_name, raw=True, **env_options).game
    sides = seatings(game.num_players, teams_of(game))
    n = len(settings.opponents)
    jobs = [
        (s, sides[(i // n) % len(sides)], settings.opponents[i % n])
        for i, s in enumerate(seeds)
    ]
    # chunks (and their generators) do not depend on the number of workers
    size = max(1, min(100, math.ceil(len(jobs) / 8)))
    chunks = [
        (
            env_name,
            env_options,
            state,
            activation,
            settings.canonical_form,
            jobs[start : start + size],
            settings.anchor_fraction,
            settings.seed * 1_000_003 + round_index * 1009 + start,
            settings.teacher,
        )
        for start in range(0, len(jobs), size)
    ]
    parts: list[RoundData] = []
    bar = progress_bar(
        total=len(jobs),
        desc=f"round {round_index + 1}: play and label",
        unit="game",
        disable=not progress,
    )
    with contextlib.ExitStack() as stack, bar:
        if settings.workers == 1 or len(chunks) == 1:
            results: Iterable[RoundData] = map(_play_chunk, chunks)
        else:
            ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
            pool = stack.enter_context(
                ctx.Pool(settings.workers, initializer=_worker_init)
            )
            results = pool.imap(_play_chunk, chunks)  # in order, as each finishes
        for chunk, part in zip(chunks, results, strict=True):
            parts.append(part)
            bar.update(len(chunk[5]))
    return RoundData.concatenate(parts)


def held_out_rows(data: RoundData, seed: int, round_index: int) -> np.ndarray:
    """The decisive rows of a round that no fit trains on (`HELD_OUT` of them, the
    same in every later round), as a bool mask."""
    rng = np.random.default_rng([seed, round_index, 2])
    rows = np.flatnonzero(data.decisive)
    held = np.zeros(len(data.decisive), dtype=bool)
    held[rng.permutation(rows)[: int(len(rows) * HELD_OUT)]] = True
    return held


# --- the fit --------------------------------------------------------------------------
@dataclass
class FitFigures:
    """One round's fit: its losses and the held-out agreement."""

    set_loss: float  # mean -log p(optimal set) over the decisive rows, last epoch
    anchor_kl: float  # mean KL(source || network) over the anchor rows, last epoch
    held_out: int  # decisive rows held out of the fit
    held_out_optimal: float | None  # share of them whose greedy move is optimal


def fit_round(
    actor: Actor,
    source: NumpyPolicy,
    data: RoundData,
    settings: Settings,
    round_index: int,
    held: np.ndarray,
    renaming: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> FitFigures:
    """Fit ``actor`` (in place) to the decisive rows' optimal sets, anchored to the
    ``source`` network's policy on the other rows (`Settings`); the rows ``held``
    (bool per row) are left out of the fit and scored after it. ``renaming``
    (`suit_renamings`) renames each decisive row's suits at random."""
    rng = np.random.default_rng([settings.seed, round_index, 1])
    test = np.flatnonzero(held)
    n_test = len(test)
    train = np.flatnonzero(~held)
    obs = torch.from_numpy(data.observations)
    masks = torch.from_numpy(data.masks)
    targets = torch.from_numpy(data.targets)
    is_decisive = torch.from_numpy(data.decisive)
    # the source's policy on every row (used on the anchor rows only)
    logits = source.logits(data.observations)
    logits = np.where(data.masks, logits, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    reference = torch.from_numpy(
        (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)
    )
    optimizer = torch.optim.Adam(actor.parameters(), lr=settings.learning_rate)
    set_loss = anchor_kl = 0.0
    for _ in range(settings.epochs):
        rng.shuffle(train)
        sums = np.zeros(4)  # set loss, decisive rows, KL, anchor rows
        actor.train(True)
        for start in range(0, len(train), settings.batch_size):
            idx = torch.from_numpy(train[start : start + settings.batch_size])
            batch = (obs[idx], masks[idx], targets[idx], is_decisive[idx])
            sums += fit_step(
                actor, optimizer, batch, reference[idx], settings.anchor, renaming, rng
            )
        set_loss = sums[0] / max(1, sums[1])
        anchor_kl = sums[2] / max(1, sums[3])
    actor.train(False)
    held = None
    if n_test:
        with torch.no_grad():
            idx = torch.from_numpy(test)
            pick = actor.masked_log_probs(obs[idx], masks[idx]).argmax(1, keepdim=True)
            held = float(targets[idx].gather(1, pick).float().mean())
    return FitFigures(set_loss, anchor_kl, n_test, held)


def fit_step(
    actor: Actor,
    optimizer: torch.optim.Optimizer,
    batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
    reference: torch.Tensor,
    anchor: float,
    renaming: tuple[torch.Tensor, torch.Tensor] | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """One minibatch step of the fit: the set loss on the decisive rows (renamed with
    ``renaming``), plus ``anchor`` times the KL divergence from ``reference`` (the
    source's log-probabilities, -inf on illegal moves) on the others. ``batch`` is
    (observations, masks, targets, decisive); returns the summed set loss, the decisive
    rows, the summed KL and the anchor rows."""
    x, legal, goal, d = batch
    if renaming is not None:
        x, legal, goal = _renamed(renaming, d, x, legal, goal, rng)
    log_p = actor.masked_log_probs(x, legal)
    nll = _target_nll(log_p[d], goal[d])
    ref = reference[~d]
    p_ref = ref.exp()  # zero on illegal moves, where ref is -inf
    kl = (p_ref * (ref.clamp_min(-1e8) - log_p[~d])).sum(dim=1)
    loss = (nll.sum() + anchor * kl.sum()) / len(d)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(actor.parameters(), 1.0)
    optimizer.step()
    return np.array(
        [float(nll.detach().sum()), len(nll), float(kl.detach().sum()), len(kl)]
    )


def check_suit_symmetry(env_name: str) -> None:
    """ValueError (one line) unless the env's record renames its suits
    (``suit_renaming``: its rules treat the suits alike)."""
    if not envs.record(env_name).suit_renaming:
        having = [r.name for r in envs.records() if r.suit_renaming]
        raise ValueError(
            f"suit_symmetry renames the suits of {', '.join(having)} observations, "
            f"not {env_name}'s"
        )


def suit_renamings(env_name: str, game: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Every renaming of the four suits as observation and card indices (the env
    record's ``suit_renaming``), the identity first."""
    obs_index, card_index = index_renamings(env_name, game)
    return torch.from_numpy(obs_index), torch.from_numpy(card_index)


def _renamed(
    renaming: tuple[torch.Tensor, torch.Tensor],
    decisive: torch.Tensor,
    obs: torch.Tensor,
    masks: torch.Tensor,
    targets: torch.Tensor,
    rng: np.random.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A minibatch with each decisive row's suits renamed at random (the anchor rows
    kept as they are: the anchor holds the source's own moves)."""
    obs_index, card_index = renaming
    pick = torch.from_numpy(rng.integers(len(obs_index), size=len(obs)))
    pick[~decisive] = 0  # the identity
    return (
        obs.gather(1, obs_index[pick]),
        masks.gather(1, card_index[pick]),
        targets.gather(1, card_index[pick]),
    )


# --- the run --------------------------------------------------------------------------
@dataclass
class DaggerResult:
    """A DAgger run: its directory, the rounds done, and each round's record."""

    run_dir: Path
    rounds_done: int
    records: list[dict[str, Any]]
    interrupted: bool
    checkpoint: Path | None


def _source_checkpoint(source: str) -> Path:
    """The checkpoint directory of a source: ``pretrained:NAME`` (a shipped model),
    a checkpoint or a run directory."""
    if source.startswith("pretrained:"):
        from .pretrained import named

        return named(source.removeprefix("pretrained:"))
    return ckpt_io.resolve(source)


def check_settings(settings: Settings) -> ckpt_io.Checkpoint:
    """ValueError (one line) for a bad setting; the source's loaded checkpoint."""
    for name in ("rounds", "games", "epochs", "batch_size", "workers"):
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not settings.learning_rate > 0:
        raise ValueError(
            f"learning_rate must be positive, got {settings.learning_rate}"
        )
    if not settings.anchor >= 0:
        raise ValueError(f"anchor must be at least 0, got {settings.anchor}")
    if not 0 <= settings.anchor_fraction <= 1:
        raise ValueError(
            f"anchor_fraction must lie in [0, 1], got {settings.anchor_fraction}"
        )
    if not settings.opponents:
        raise ValueError("opponents: name at least one (an agent spec or self)")
    loaded = ckpt_io.load(_source_checkpoint(settings.source))
    env_name, options = loaded.env_name, loaded.env_options
    if settings.suit_symmetry:
        check_suit_symmetry(env_name)
    check_canonical_settings(settings, loaded)
    Teacher(settings.teacher, env_name, options)  # a teacher the env lacks
    if loaded.manifest.get("activation") not in ACTIVATIONS:
        raise ValueError(f"{settings.source}: unknown activation")
    game = envs.make(env_name, raw=True, **options).game
    ckpt_io.check_compatible(
        loaded,
        env_name,
        envs.game_options(env_name, options),
        game.observation_size,
        game.num_actions,
    )
    for spec in settings.opponents:
        if spec != SELF:
            try:
                agents_mod.make(spec, env_name, seed=0, env_options=options)
            except (ValueError, FileNotFoundError) as err:
                raise ValueError(f"opponent {spec!r}: {err}") from None
    return loaded


def check_canonical_settings(settings: Any, loaded: ckpt_io.Checkpoint) -> None:
    """ValueError (one line) where a run or refit (``settings``, from the source
    ``loaded``) fits positions in their canonical form, asked for or the source's, in
    an env that has none, or also renames their suits at random."""
    if not (settings.canonical_form or loaded.canonical_form):
        return
    check_canonical_form(loaded.env_name)
    if settings.suit_symmetry:
        raise ValueError(
            "suit_symmetry renames the suits that canonical_form puts in order: "
            "choose one (the source reads canonical positions, or --canonical-form "
            "was given)"
        )


def follow_source_form(
    settings: Any, loaded: ckpt_io.Checkpoint, say: Callable[[str], None], what: str
) -> Any:
    """``settings`` with ``canonical_form`` on where the source ``loaded`` reads
    canonical positions (its network's input), said once."""
    if loaded.canonical_form and not settings.canonical_form:
        say(f"the source reads positions in their canonical form: so does the {what}")
        return dataclasses.replace(settings, canonical_form=True)
    return settings


def _stored(run_dir: Path) -> tuple[Settings | None, list[dict[str, Any]]]:
    path = run_dir / SETTINGS
    if not path.is_file():
        return None, []
    data = json.loads(path.read_text())
    data["opponents"] = tuple(data["opponents"])
    names = {f.name for f in dataclasses.fields(Settings)}
    data = {k: v for k, v in data.items() if k in names}
    records = (
        json.loads((run_dir / ROUNDS).read_text())
        if (run_dir / ROUNDS).is_file()
        else []
    )
    return Settings(**data), records


def run(
    settings: Settings,
    run_dir: str | Path,
    resume: bool = False,
    say: Callable[[str], None] = print,
    progress: bool = False,
) -> DaggerResult:
    """Run (or, with ``resume``, continue to ``settings.rounds`` rounds) a DAgger run
    in ``run_dir``; every check comes before anything is written. Ctrl-C keeps the
    rounds finished."""
    path = Path(run_dir)
    ckpt_io.check_output_path(path, directory=True, what="run directory")
    stored, records = _stored(path) if path.is_dir() else (None, [])
    if resume:
        if stored is None:
            raise ValueError(f"nothing to resume: {path} holds no DAgger run")
        if dataclasses.replace(stored, rounds=settings.rounds) != settings:
            settings = dataclasses.replace(stored, rounds=settings.rounds)
            say(f"resuming with the run's stored settings, to {settings.rounds} rounds")
    elif path.is_dir() and any(path.iterdir()):
        raise ValueError(
            f"run directory {path} is not empty: pass --resume to continue the run "
            "it holds, or choose another --run-dir"
        )
    loaded = check_settings(settings)
    settings = follow_source_form(settings, loaded, say, "run")
    env_name, options = loaded.env_name, loaded.env_options
    game = envs.make(env_name, raw=True, **options).game
    activation = loaded.manifest["activation"]
    source_state = ckpt_io.to_numpy(loaded.tensors["policy"])
    source_policy = make_policy(
        source_state, activation, env_name, game, loaded.canonical_form
    )
    done = len(records)
    state = (
        ckpt_io.to_numpy(ckpt_io.load(path).tensors["policy"]) if done else source_state
    )
    actor = Actor(state, activation)
    path.mkdir(parents=True, exist_ok=True)
    (path / "data").mkdir(exist_ok=True)
    body = {k: v for k, v in dataclasses.asdict(settings).items()}
    body["source_checkpoint"] = str(loaded.path)
    ckpt_io.write_json_atomic(
        path / SETTINGS, {**body, "opponents": list(settings.opponents)}
    )
    torch.manual_seed(settings.seed)
    renaming = None
    if settings.suit_symmetry:
        renaming = suit_renamings(env_name, game)
    checkpoint = ckpt_io.resolve(path) if done else None

    def fitted(data: RoundData) -> RoundData:
        """A round's rows as the fit reads them (the disk keeps them as played)."""
        if settings.canonical_form:
            return canonical_rows(data, env_name, game)
        return data

    # the rounds' kept decisions, read from disk once (a resumed run's earlier rounds)
    parts = [
        fitted(RoundData.load(path / "data" / f"round-{i}.npz")) for i in range(done)
    ]
    try:
        for r in range(done, settings.rounds):
            started = time.time()
            data = play_round(
                env_name, options, actor.state(), activation, settings, r, progress
            )
            data.save(path / "data" / f"round-{r}.npz")
            played = time.time() - started
            parts.append(fitted(data))
            every = RoundData.concatenate(parts)
            held = np.concatenate(
                [held_out_rows(p, settings.seed, i) for i, p in enumerate(parts)]
            )
            figures = fit_round(
                actor, source_policy, every, settings, r, held, renaming
            )
            checkpoint = _save_round(path, r, actor, loaded, settings)
            s = data.stats
            record = {
                "round": r + 1,
                **s,
                "missed_share": s["missed"] / s["decisive"] if s["decisive"] else None,
                "rows": len(every.decisive),
                "decisive_rows": int(every.decisive.sum()),
                **dataclasses.asdict(figures),
                "play_s": round(played, 1),
                "fit_s": round(time.time() - started - played, 1),
            }
            records.append(record)
            ckpt_io.write_json_atomic(path / ROUNDS, records)
            say(_round_line(record))
    except KeyboardInterrupt:
        return DaggerResult(path, len(records), records, True, checkpoint)
    return DaggerResult(path, len(records), records, False, checkpoint)


def _round_line(record: dict[str, Any]) -> str:
    missed = record["missed_share"]
    held = record["held_out_optimal"]
    return (
        f"round {record['round']}: {record['games']:,} games, "
        f"{record['decisive']:,} decisive decisions, "
        + (f"{missed:.1%} missed before the fit" if missed is not None else "none")
        + f"; fit on {record['decisive_rows']:,} + "
        f"{record['rows'] - record['decisive_rows']:,} anchor rows: set loss "
        f"{record['set_loss']:.4f}, KL {record['anchor_kl']:.4f}"
        + (f", held-out optimal {held:.1%}" if held is not None else "")
        + f" ({record['play_s']:.0f} s play, {record['fit_s']:.0f} s fit)"
    )


def _save_round(
    path: Path,
    round_index: int,
    actor: Actor,
    source: ckpt_io.Checkpoint,
    settings: Settings,
) -> Path:
    """Write round ``round_index``'s actor as a checkpoint; point latest.json at it."""
    from .. import envs as envs_mod

    body = {k: v for k, v in source.manifest.items() if k not in _DROPPED}
    options = envs_mod.game_options(source.env_name, source.env_options)
    body["fingerprint"] = envs_mod.fingerprint(source.env_name, options)
    body["dagger"] = {
        **dataclasses.asdict(settings),
        "opponents": list(settings.opponents),
        "round": round_index + 1,
        "source_weights_sha256": source.manifest["weights_sha256"],
    }
    if settings.canonical_form:
        body[ckpt_io.CANONICAL_FORM] = True
    name = f"checkpoints/round-{round_index + 1}"
    out = ckpt_io.save(path / name, {"policy": ckpt_io.to_torch(actor.state())}, body)
    ckpt_io.write_json_atomic(path / ckpt_io.LATEST, {"checkpoint": name})
    return out


# --- command line ---------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour dagger``: `Settings`' fields, --run-dir, --resume."""
    defaults = Settings(source="")
    parser.add_argument("source", help="checkpoint, run directory or pretrained:NAME")
    parser.add_argument("--run-dir", required=True, help="where the rounds go")
    parser.add_argument("--resume", action="store_true", help="continue the run")
    for field in dataclasses.fields(Settings):
        if field.name in ("source", "opponents"):
            continue
        if isinstance(getattr(defaults, field.name), bool):
            parser.add_argument(
                "--" + field.name.replace("_", "-"), action="store_true"
            )
            continue
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            type=type(getattr(defaults, field.name)),
            default=getattr(defaults, field.name),
        )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=list(defaults.opponents),
        help="agent specs, or self (default: heuristic self)",
    )


def run_command(args: argparse.Namespace) -> int:
    """Run ``parlour dagger`` with parsed ``args``: bad input raises ValueError (the
    command line's one line, exit 2) before anything is written."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(Settings)}
    values["opponents"] = tuple(args.opponents)
    torch.set_num_threads(1)
    try:
        result = run(
            Settings(**values),
            args.run_dir,
            resume=args.resume,
            progress=not getattr(args, "quiet", False),
        )
    except OSError as err:  # a run dir that cannot be written: the same one line
        raise ValueError(str(err)) from None
    if result.interrupted:
        print(
            f"interrupted: {result.rounds_done} rounds kept in {result.run_dir}; "
            "continue with --resume"
        )
        return 130
    print(f"checkpoint: {result.checkpoint}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m parlour.training.dagger``, the same as ``parlour dagger``."""
    parser = argparse.ArgumentParser(prog="python -m parlour.training.dagger")
    add_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    try:
        return run_command(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
