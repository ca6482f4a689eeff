"""Refit a network to DAgger runs' labelled decisions all at once, optionally wider or
deeper: the fit `training.dagger` does each round, on every run's rows together, with
weight decay and early stopping on the held-out rows.

A DAgger round fits for a fixed number of epochs and keeps the last one; its network
plays the positions it trained on right far more often than the held-out ones (German
Whist: 99.8% against about 98.4%). This module refits one network to the rows of
*several* runs (``RUN/data/round-N.npz``; a round file two runs share, as the same seed
and source give, counted once) and keeps the epoch whose held-out rows are best:

* the held-out decisive rows are the runs' own (`training.dagger.held_out_rows` with
  each run's seed), which none of those runs' rounds trained on, so the source
  network's share of them is its held-out figure too; as large a share of the anchor
  rows is held out to measure how far the fit drifts from the source there;
* the decisive rows are fitted to their optimal sets (the set loss), under a random
  renaming of the suits with ``suit_symmetry``; the other rows (the rounds' anchor
  rows) to the *source* network's policy by the KL divergence, so the play the solver
  cannot label stays the source's;
* ``hidden`` widens or deepens the source's hidden layers without changing what it
  computes (`widen`): new units start with zero outgoing weights and new ReLU layers
  as the identity, so the fit starts from the source's play with more capacity.

The result is a checkpoint (the actor only, as a DAgger round writes) with the fit's
figures in ``distil.json`` beside it; Ctrl-C stops the fit and writes the best epoch so
far. ``parlour distil --help`` (or ``python -m parlour.training.distil``) is the
command line; every argument is checked before anything is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import envs
from . import checkpoint as ckpt_io
from .dagger import (
    _DROPPED,
    HELD_OUT,
    SETTINGS,
    Actor,
    RoundData,
    _source_checkpoint,
    canonical_rows,
    check_canonical_settings,
    check_suit_symmetry,
    fit_step,
    follow_source_form,
    held_out_rows,
    suit_renamings,
)
from .exploit import _positive
from .policy import NumpyPolicy, actor_state, make_policy

FIGURES = "distil.json"


@dataclass(frozen=True)
class Settings:
    """What a refit does; stored in the checkpoint's manifest and ``distil.json``."""

    source: str
    """the network to start from and to anchor to: a checkpoint, a run directory or
    ``pretrained:NAME``"""
    data: tuple[str, ...]
    """DAgger run directories whose ``data/round-N.npz`` rows are fitted"""
    hidden: tuple[int, ...] = ()
    """hidden layer widths (empty: the source's); each at least the source's layer's,
    layers beyond the source's added as the identity (ReLU networks only)"""
    epochs: int = 20
    """most passes over the rows"""
    patience: int = 4
    """stop after this many epochs without a better held-out share"""
    learning_rate: float = 1e-4
    """Adam's step size"""
    weight_decay: float = 0.0
    """AdamW's decoupled weight decay"""
    batch_size: int = 256
    """rows per minibatch"""
    anchor: float = 1.0
    """weight of the KL divergence to the source on the anchor rows"""
    suit_symmetry: bool = False
    """fit each decisive row under a random renaming of the four suits"""
    canonical_form: bool = False
    """fit the network to positions in their canonical form (the env record's
    ``canonical_form``; German Whist's stage 2), which it then reads (the checkpoint
    says so); a source that reads them so already implies it. It replaces
    ``suit_symmetry``, whose renamings it undoes"""
    seed: int = 0
    """seeds the new units' weights, the shuffles and the renamings"""


def widen(
    state: dict[str, np.ndarray], hidden: Sequence[int], seed: int = 0
) -> dict[str, np.ndarray]:
    """The actor ``state`` (`training.policy.actor_state`'s names, a ReLU MLP) with
    hidden layers of widths ``hidden``, computing the same function: a widened
    layer's new units get random incoming and zero outgoing weights; a layer past the
    source's is the identity on the previous layer's units (ReLU of a non-negative
    input is itself). ValueError for a narrower layer or fewer layers."""
    policy = NumpyPolicy(state, "relu")
    old = [w.T for w, _ in policy.layers]  # torch layout: [out, in]
    biases = [np.asarray(b) for _, b in policy.layers]
    if len(hidden) < len(old):
        raise ValueError(
            f"hidden has {len(hidden)} layers, the source {len(old)}: a refit can "
            "add layers, not remove them"
        )
    widths = [w.shape[0] for w in old]
    for i, (h, w) in enumerate(zip(hidden, widths, strict=False)):
        if h < w:
            raise ValueError(f"hidden layer {i + 1} is {h} wide, the source's {w}")
    for i in range(len(old), len(hidden)):
        if hidden[i] < hidden[i - 1]:
            raise ValueError(
                f"hidden layer {i + 1} is {hidden[i]} wide: an added layer is at "
                f"least as wide as the one before ({hidden[i - 1]})"
            )
    rng = np.random.default_rng(seed)
    sizes = [policy.observation_size, *hidden]
    pairs = []
    kept = policy.observation_size  # the source's units feeding the current layer
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        # torch.nn.Linear's default range for the new units' incoming weights
        bound = 1.0 / np.sqrt(n_in)
        w = rng.uniform(-bound, bound, size=(n_out, n_in)).astype(np.float32)
        b = np.zeros(n_out, dtype=np.float32)
        if i < len(old):
            w_old, b_old = old[i], biases[i]
        else:  # an added layer: the identity on the units it is fed
            w_old, b_old = np.eye(kept, dtype=np.float32), np.zeros(kept, np.float32)
        # the source's units ignore the new ones feeding them
        w[: len(b_old), :kept] = w_old
        w[: len(b_old), kept:] = 0.0
        b[: len(b_old)] = b_old
        kept = len(b_old)
        pairs.append((w, b))
    head_w, head_b = policy.out
    head = np.zeros((head_w.shape[1], sizes[-1]), np.float32)
    head[:, :kept] = head_w.T  # the new units' outgoing weights start at zero
    return actor_state(pairs, (head, np.asarray(head_b).copy()))


@dataclass
class Rows:
    """Every run's rows: the data, which rows are held out, and where they came from."""

    data: RoundData
    held: np.ndarray  # bool per row
    rounds: list[str]  # the round files read (duplicates left out)


def load_runs(run_dirs: Sequence[str | Path]) -> Rows:
    """The rows of the DAgger runs ``run_dirs`` with their held-out rows (each run's
    seed); a round file identical to one already read is skipped."""
    parts, held, names, seen = [], [], [], set()
    for run_dir in run_dirs:
        path = Path(run_dir)
        settings_path = path / SETTINGS
        if not settings_path.is_file():
            raise ValueError(f"{path} holds no DAgger run (no {SETTINGS})")
        seed = int(json.loads(settings_path.read_text())["seed"])
        files = sorted(
            (path / "data").glob("round-*.npz"),
            key=lambda p: int(p.stem.removeprefix("round-")),
        )
        if not files:
            raise ValueError(f"{path} holds no round data (data/round-N.npz)")
        for f in files:
            digest = hashlib.sha256(f.read_bytes()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            part = RoundData.load(f)
            parts.append(part)
            index = int(f.stem.removeprefix("round-"))
            kept = held_out_rows(part, seed, index)
            # as many anchor rows held out, to measure the drift from the source
            rng = np.random.default_rng([seed, index, 3])
            kept |= ~part.decisive & (rng.random(len(kept)) < HELD_OUT)
            held.append(kept)
            names.append(str(f))
    return Rows(RoundData.concatenate(parts), np.concatenate(held), names)


@dataclass
class Epoch:
    """One epoch's figures."""

    epoch: int
    set_loss: float  # mean -log p(optimal set), training decisive rows
    anchor_kl: float  # mean KL(source || network), training anchor rows
    held_out_optimal: float  # share of held-out decisive rows played optimally
    held_out_kl: float  # mean KL on the held-out anchor rows
    seconds: float


def _log_softmax_masked(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    logits = np.where(masks, logits, -np.inf)
    logits = logits - logits.max(axis=1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))


def _kl(ref: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
    """KL(ref || p) per row; ``ref`` is -inf on illegal moves."""
    return (ref.exp() * (ref.clamp_min(-1e8) - log_p)).sum(dim=1)


def evaluate(
    actor: Actor, rows: RoundData, reference: torch.Tensor, held: np.ndarray
) -> tuple[float, float]:
    """The held-out decisive rows' optimal share and the held-out anchor rows' KL."""
    actor.train(False)
    out = []
    with torch.no_grad():
        for decisive in (True, False):
            idx = torch.from_numpy(np.flatnonzero(held & (rows.decisive == decisive)))
            if not len(idx):
                out.append(float("nan"))
                continue
            log_p = actor.masked_log_probs(
                torch.from_numpy(rows.observations[idx.numpy()]),
                torch.from_numpy(rows.masks[idx.numpy()]),
            )
            if decisive:
                pick = log_p.argmax(1, keepdim=True)
                goal = torch.from_numpy(rows.targets[idx.numpy()])
                out.append(float(goal.gather(1, pick).float().mean()))
            else:
                out.append(float(_kl(reference[idx], log_p).mean()))
    return out[0], out[1]


def fit(
    actor: Actor,
    rows: Rows,
    reference: torch.Tensor,
    settings: Settings,
    renaming: tuple[torch.Tensor, torch.Tensor] | None = None,
    say: Callable[[str], None] = print,
) -> tuple[dict[str, np.ndarray], list[Epoch]]:
    """Fit ``actor`` to the rows not held out (the set loss on the decisive ones, the
    KL to ``reference``, the source's log-probabilities, on the others) and return
    the best epoch's weights (the held-out decisive rows' share, ties to the earlier)
    and every epoch's figures. Epoch 0 is the start."""
    data = rows.data
    rng = np.random.default_rng([settings.seed, 1])
    obs = torch.from_numpy(data.observations)
    masks = torch.from_numpy(data.masks)
    targets = torch.from_numpy(data.targets)
    is_decisive = torch.from_numpy(data.decisive)
    train = np.flatnonzero(~rows.held)
    optimizer = torch.optim.AdamW(
        actor.parameters(),
        lr=settings.learning_rate,
        weight_decay=settings.weight_decay,
    )
    started = time.time()
    best_share, best_kl = evaluate(actor, data, reference, rows.held)
    history = [Epoch(0, float("nan"), float("nan"), best_share, best_kl, 0.0)]
    say(f"epoch 0: held-out optimal {best_share:.2%}, held-out KL {best_kl:.4f}")
    best_state, since = actor.state(), 0
    try:
        for epoch in range(1, settings.epochs + 1):
            actor.train(True)
            rng.shuffle(train)
            sums = np.zeros(4)
            for start in range(0, len(train), settings.batch_size):
                idx = torch.from_numpy(train[start : start + settings.batch_size])
                batch = (obs[idx], masks[idx], targets[idx], is_decisive[idx])
                sums += fit_step(
                    actor,
                    optimizer,
                    batch,
                    reference[idx],
                    settings.anchor,
                    renaming,
                    rng,
                )
            share, held_kl = evaluate(actor, data, reference, rows.held)
            figures = Epoch(
                epoch,
                sums[0] / max(1, sums[1]),
                sums[2] / max(1, sums[3]),
                share,
                held_kl,
                round(time.time() - started, 1),
            )
            history.append(figures)
            say(
                f"epoch {epoch}: set loss {figures.set_loss:.4f}, KL "
                f"{figures.anchor_kl:.4f}; held-out optimal {share:.2%}, held-out KL "
                f"{held_kl:.4f} ({figures.seconds:.0f} s)"
            )
            if share > best_share:
                best_share, best_state, since = share, actor.state(), 0
            else:
                since += 1
                if since >= settings.patience:
                    break
    except KeyboardInterrupt:  # Ctrl-C: keep what the finished epochs found
        say("interrupted: the best epoch so far is kept")
    return best_state, history


def check_settings(settings: Settings) -> ckpt_io.Checkpoint:
    """ValueError (one line) for a bad setting; the source's loaded checkpoint."""
    for name in ("epochs", "patience", "batch_size"):
        _positive(name, getattr(settings, name))
    if not settings.learning_rate > 0:
        raise ValueError(
            f"learning_rate must be positive, got {settings.learning_rate}"
        )
    for name in ("weight_decay", "anchor"):
        if not getattr(settings, name) >= 0:
            raise ValueError(
                f"{name} must be at least 0, got {getattr(settings, name)}"
            )
    if not settings.data:
        raise ValueError("data: name at least one DAgger run directory")
    loaded = ckpt_io.load(_source_checkpoint(settings.source))
    if settings.suit_symmetry:
        check_suit_symmetry(loaded.env_name)
    check_canonical_settings(settings, loaded)
    if settings.hidden:
        if loaded.manifest.get("activation") != "relu":
            raise ValueError("hidden widens ReLU networks only")
        widen(ckpt_io.to_numpy(loaded.tensors["policy"]), settings.hidden)
    return loaded


def run(
    settings: Settings, out: str | Path, say: Callable[[str], None] = print
) -> tuple[Path, list[Epoch]]:
    """Refit the source to the runs' rows (`Settings`) and write the best epoch's
    actor as the checkpoint ``out``, its figures in ``out/distil.json``."""
    out = Path(out)
    ckpt_io.check_output_path(out, directory=True, what="output checkpoint")
    loaded = check_settings(settings)
    settings = follow_source_form(settings, loaded, say, "refit")
    rows = load_runs(settings.data)
    game = envs.make(loaded.env_name, raw=True, **loaded.env_options).game
    if rows.data.observations.shape[1] != game.observation_size:
        raise ValueError(
            f"the runs' rows have {rows.data.observations.shape[1]} observation "
            f"features, {loaded.env_name}'s observation {game.observation_size}"
        )
    if settings.canonical_form:
        rows.data = canonical_rows(rows.data, loaded.env_name, game)
    activation = loaded.manifest["activation"]
    source_state = ckpt_io.to_numpy(loaded.tensors["policy"])
    source = make_policy(
        source_state, activation, loaded.env_name, game, loaded.canonical_form
    )
    reference = torch.from_numpy(
        _log_softmax_masked(
            source.logits(rows.data.observations), rows.data.masks
        ).astype(np.float32)
    )
    state = (
        widen(source_state, settings.hidden, settings.seed)
        if settings.hidden
        else source_state
    )
    torch.manual_seed(settings.seed)
    actor = Actor(state, activation)
    renaming = suit_renamings(loaded.env_name, game) if settings.suit_symmetry else None
    say(
        f"{len(rows.rounds)} rounds: {int(rows.data.decisive.sum()):,} decisive rows "
        f"({int((rows.held & rows.data.decisive).sum()):,} held out), "
        f"{int((~rows.data.decisive).sum()):,} anchor rows"
    )
    best, history = fit(actor, rows, reference, settings, renaming, say)
    body = {k: v for k, v in loaded.manifest.items() if k not in _DROPPED}
    options = envs.game_options(loaded.env_name, loaded.env_options)
    body["fingerprint"] = envs.fingerprint(loaded.env_name, options)
    widths = [int(v.shape[0]) for k, v in best.items() if k.endswith(".bias")][:-1]
    body["net_arch"] = widths
    body["config"] = {**body.get("config", {}), "net_arch": widths}
    record = {
        **dataclasses.asdict(settings),
        "source_weights_sha256": loaded.manifest["weights_sha256"],
        "rounds": rows.rounds,
    }
    body["distil"] = {
        k: list(v) if isinstance(v, tuple) else v for k, v in record.items()
    }
    if settings.canonical_form:
        body[ckpt_io.CANONICAL_FORM] = True
    path = ckpt_io.save(out, {"policy": ckpt_io.to_torch(best)}, body)
    ckpt_io.write_json_atomic(
        path / FIGURES,
        {**body["distil"], "epochs_run": [dataclasses.asdict(e) for e in history]},
    )
    return path, history


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour distil``: `Settings`' fields and --out."""
    defaults = Settings(source="", data=())
    parser.add_argument("source", help="checkpoint, run directory or pretrained:NAME")
    parser.add_argument("--data", nargs="+", required=True, help="DAgger run dirs")
    parser.add_argument("--out", required=True, help="the checkpoint to write")
    parser.add_argument(
        "--hidden", type=int, nargs="+", default=[], help="hidden layer widths"
    )
    for name in ("epochs", "patience", "batch_size", "seed"):
        parser.add_argument(
            "--" + name.replace("_", "-"), type=int, default=getattr(defaults, name)
        )
    for name in ("learning_rate", "weight_decay", "anchor"):
        parser.add_argument(
            "--" + name.replace("_", "-"), type=float, default=getattr(defaults, name)
        )
    parser.add_argument("--suit-symmetry", action="store_true")
    parser.add_argument(
        "--canonical-form",
        action="store_true",
        help="fit (and read) positions in their canonical form (German Whist's "
        "stage 2: ranks compressed, suits in order)",
    )


def run_command(args: argparse.Namespace) -> int:
    """Run ``parlour distil`` with parsed ``args``: bad input raises ValueError (the
    command line's one line, exit 2) before anything is written."""
    torch.set_num_threads(1)
    names = [f.name for f in dataclasses.fields(Settings)]
    values = {k: getattr(args, k) for k in names if k not in ("data", "hidden")}
    settings = Settings(**values, data=tuple(args.data), hidden=tuple(args.hidden))
    try:
        path, history = run(settings, args.out)
    except (OSError, ckpt_io.CheckpointError) as err:
        raise ValueError(str(err)) from None
    best = max(history, key=lambda e: e.held_out_optimal)
    print(f"checkpoint: {path} (epoch {best.epoch}, {best.held_out_optimal:.2%})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m parlour.training.distil``: ``parlour distil`` itself."""
    from parlour.cli import main as parlour_main

    return parlour_main(["distil", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
