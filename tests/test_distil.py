"""Refitting a network to DAgger runs' rows (`parlour.training.distil`): widening that
keeps the function, the rows read once with their held-out share, early stopping, the
checkpoint written, and bad input."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from helpers import shipped_copy

from parlour.agents.checkpoint import CheckpointAgent
from parlour.training import checkpoint as ckpt_io
from parlour.training import dagger, distil, pretrained
from parlour.training.policy import NumpyPolicy, actor_state

ENV = "german_whist_v0"
SOURCE = "pretrained:german_whist_v0"


def _mlp(sizes: list[int], actions: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    pairs = [
        (
            rng.normal(size=(b, a)).astype(np.float32),
            rng.normal(size=b).astype(np.float32),
        )
        for a, b in zip(sizes, sizes[1:], strict=False)
    ]
    head = (
        rng.normal(size=(actions, sizes[-1])).astype(np.float32),
        rng.normal(size=actions).astype(np.float32),
    )
    return actor_state(pairs, head)


@pytest.mark.parametrize("hidden", [(5, 4), (9, 4), (9, 7, 7), (5, 4, 6, 8)])
def test_widen_keeps_the_function(hidden):
    state = _mlp([6, 5, 4], 3)
    wide = distil.widen(state, hidden, seed=1)
    x = np.random.default_rng(2).normal(size=(64, 6)).astype(np.float32)
    before = NumpyPolicy(state, "relu").logits(x)
    after = NumpyPolicy(wide, "relu")
    assert [w.shape[1] for w, _ in after.layers] == list(hidden)
    np.testing.assert_allclose(after.logits(x), before, rtol=1e-5, atol=1e-5)
    # the new units are live: some of their incoming weights are not zero
    if hidden[0] > 5:
        assert np.abs(after.layers[0][0][:, 5:]).sum() > 0


@pytest.mark.parametrize(
    ("hidden", "message"),
    [((4, 4), "layer 1 is 4 wide"), ((5,), "add layers"), ((5, 4, 3), "at least")],
)
def test_widen_refuses_narrower_or_fewer_layers(hidden, message):
    with pytest.raises(ValueError, match=message):
        distil.widen(_mlp([6, 5, 4], 3), hidden)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two tiny DAgger runs from the shipped model; the second shares a round file
    with the first (the same seed and source), as two real runs did."""
    root = tmp_path_factory.mktemp("runs")
    base = dagger.Settings(SOURCE, rounds=2, games=6, epochs=1, batch_size=64)
    dagger.run(base, root / "a", say=lambda _: None)
    dagger.run(dataclasses.replace(base, rounds=1), root / "b", say=lambda _: None)
    return root / "a", root / "b"


def test_load_runs_reads_each_round_once_with_its_held_out_rows(runs):
    a, b = runs
    rows = distil.load_runs([a, b])
    assert len(rows.rounds) == 2  # b's only round is a's first
    parts = [dagger.RoundData.load(a / "data" / f"round-{i}.npz") for i in (0, 1)]
    assert len(rows.data.decisive) == sum(len(p.decisive) for p in parts)
    expected = np.concatenate(
        [dagger.held_out_rows(p, 0, i) for i, p in enumerate(parts)]
    )
    # the runs' own held-out decisive rows, and no other decisive row
    assert (rows.held & rows.data.decisive == expected).all()
    with pytest.raises(ValueError, match="no DAgger run"):
        distil.load_runs([a / "data"])


def tiny(runs, **changes) -> distil.Settings:
    """A refit of seconds."""
    base = distil.Settings(
        SOURCE, tuple(str(r) for r in runs), epochs=2, patience=1, batch_size=64
    )
    return dataclasses.replace(base, **changes)


def test_run_writes_the_best_epoch_as_a_wider_checkpoint(runs, tmp_path):
    out = tmp_path / "wide"
    raw = shipped_copy(ENV, tmp_path / "raw")
    settings = tiny(
        runs, source=raw, hidden=(320, 256, 256), suit_symmetry=True, epochs=3
    )
    path, history = distil.run(settings, out, say=lambda _: None)
    assert history[0].epoch == 0 and 2 <= len(history) <= 4
    loaded = ckpt_io.load(path)
    assert loaded.manifest["net_arch"] == [320, 256, 256]
    assert loaded.manifest["distil"]["hidden"] == [320, 256, 256]
    # the source plays its suit average; the new network's play is not yet measured
    assert ckpt_io.load(pretrained.named(SOURCE.split(":")[1])).suit_average
    assert ckpt_io.SUIT_AVERAGE not in loaded.manifest
    figures = json.loads((path / distil.FIGURES).read_text())
    shares = [e["held_out_optimal"] for e in figures["epochs_run"]]
    assert len(shares) == len(history)
    # epoch 0 is the source itself: widening changed nothing it plays
    start = distil.evaluate(
        dagger.Actor(ckpt_io.to_numpy(loaded.tensors["policy"]), "relu"),
        distil.load_runs(settings.data).data,
        *_reference_and_held(settings),
    )
    assert start[0] == max(shares)  # the checkpoint is the best epoch
    CheckpointAgent(str(path), ENV)  # it plays


def _reference_and_held(settings: distil.Settings):
    rows = distil.load_runs(settings.data)
    source = NumpyPolicy(
        ckpt_io.to_numpy(
            ckpt_io.load(dagger._source_checkpoint(SOURCE)).tensors["policy"]
        ),
        "relu",
    )
    reference = torch.from_numpy(
        distil._log_softmax_masked(
            source.logits(rows.data.observations), rows.data.masks
        ).astype(np.float32)
    )
    return reference, rows.held


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"epochs": 0}, "epochs must be a positive"),
        ({"learning_rate": 0.0}, "learning_rate must be positive"),
        ({"weight_decay": -1.0}, "weight_decay must be at least 0"),
        ({"data": ()}, "at least one DAgger run"),
        ({"hidden": (128, 128)}, "hidden layer 1 is 128 wide"),
    ],
)
def test_bad_settings_fail_before_anything_is_written(runs, tmp_path, changes, message):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=message):
        distil.run(tiny(runs, **changes), out, say=lambda _: None)
    assert not out.exists()


def test_command_line_one_line_error(runs, tmp_path, capsys):
    code = distil.main(
        [SOURCE, "--data", str(runs[0]), "--out", str(tmp_path / "x"), "--epochs", "0"]
    )
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "parlour distil: error: epochs must be a positive integer, got 0"
    ]


def test_ctrl_c_keeps_the_best_epoch_so_far(runs, tmp_path, monkeypatch):
    """An interrupt during epoch 1 writes the checkpoint of epoch 0: the source."""
    calls = []
    evaluate = distil.evaluate

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return evaluate(*args)

    monkeypatch.setattr(distil, "evaluate", interrupted)
    lines: list[str] = []
    path, history = distil.run(tiny(runs), tmp_path / "out", say=lines.append)
    assert [e.epoch for e in history] == [0] and "interrupted" in lines[-1]
    source = ckpt_io.load(dagger._source_checkpoint(SOURCE)).tensors["policy"]
    written = ckpt_io.load(path).tensors["policy"]
    assert all((written[k] == source[k]).all() for k in source)
