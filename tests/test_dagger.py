"""DAgger with the exact solver (`parlour.training.dagger`): the labels, the fit, the
run directory, interruption and resume, and bad input."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from helpers import shipped_copy

from parlour.agents.checkpoint import CheckpointAgent
from parlour.training import checkpoint as ckpt_io
from parlour.training import dagger
from parlour.training.policy import NumpyPolicy, actor_state
from parlour.training.pretrained import named

ENV = "german_whist_v0"
SOURCE = "pretrained:german_whist_v0"


def tiny(**changes) -> dagger.Settings:
    """A run of seconds from the shipped German Whist model."""
    base = dagger.Settings(SOURCE, rounds=2, games=6, epochs=1, batch_size=64)
    return dataclasses.replace(base, **changes)


def shipped_state() -> tuple[dict[str, np.ndarray], str]:
    loaded = ckpt_io.load(named(ENV))
    return ckpt_io.to_numpy(loaded.tensors["policy"]), loaded.manifest["activation"]


def check_rows(data: dagger.RoundData, games: int) -> None:
    """The games counted; every kept teacher row has fewer best moves than legal ones,
    all legal; the misses counted are among them; anchor rows carry no target."""
    s = data.stats
    assert s["games"] == games and s["decisive"] == int(data.decisive.sum()) > 0
    assert 0 <= s["missed"] <= s["decisive"] <= s["solver_valued"] < s["decisions"]
    t, m = data.targets[data.decisive], data.masks[data.decisive]
    assert not (t & ~m).any()
    assert (t.sum(1) >= 1).all() and (t.sum(1) < m.sum(1)).all()
    assert not data.targets[~data.decisive].any()


def test_rows_are_the_networks_decisive_solver_positions():
    """Every kept solver row has fewer optimal moves than legal ones, all legal; the
    misses counted are among them; anchor rows carry no target."""
    state, activation = shipped_state()
    data = dagger.play_round(ENV, {}, state, activation, tiny(games=8), 0)
    check_rows(data, games=8)
    s = data.stats
    # anchor_fraction 0 keeps no unlabelled row; the games and labels do not change
    none = dagger.play_round(
        ENV, {}, state, activation, tiny(games=8, anchor_fraction=0), 0
    )
    assert none.decisive.all() and none.stats == s


FORTY_FIVES = "pretrained:forty_fives_v0"


def test_pimc_teacher_labels_forty_fives_with_its_best_moves():
    """The PIMC teacher (``pimc:2``) labels the network's searched Forty-Fives
    decisions with the moves of the best mean value: legal, not empty, fewer than
    the legal moves; the labels do not depend on the chunking of the games."""
    loaded = ckpt_io.load(named("forty_fives_v0"))
    state = ckpt_io.to_numpy(loaded.tensors["policy"])
    args = ("forty_fives_v0", loaded.env_options, state, loaded.manifest["activation"])
    settings = tiny(source=FORTY_FIVES, games=2, teacher="pimc:2")
    data = dagger.play_round(*args, settings, 0)
    check_rows(data, games=2)
    # a game's labels depend on its deal, not on the games its worker played before
    mine = [True, False, True, False]
    jobs = [(seed, mine, "heuristic") for seed in dagger.round_seeds(0, 0, 2)]
    both = dagger._play_chunk((*args, False, jobs, 0.0, 7, "pimc:2"))
    second = dagger._play_chunk((*args, False, jobs[1:], 0.0, 7, "pimc:2"))
    n = len(second.targets)
    assert n and np.array_equal(both.targets[-n:], second.targets)


def test_the_network_takes_one_partnership_against_the_opponent(monkeypatch):
    """Four-player Forty-Fives: against ``heuristic`` the network holds one
    partnership (seats 0 and 2, then 1 and 3 in the opponent's next game) and the
    heuristic bot the other; against ``self`` it holds every seat."""
    seen = []
    real = dagger.play_game

    def record(env, players, seed=None):
        seen.append([type(p).__name__ for p in players])
        return real(env, players, seed=seed)

    monkeypatch.setattr(dagger, "play_game", record)
    loaded = ckpt_io.load(named("forty_fives_v0"))
    state = ckpt_io.to_numpy(loaded.tensors["policy"])
    settings = tiny(source=FORTY_FIVES, games=4, teacher="pimc:1")
    dagger.play_round(
        "forty_fives_v0",
        loaded.env_options,
        state,
        loaded.manifest["activation"],
        settings,
        0,
    )
    net, bot = "_Recorder", "FortyFivesHeuristic"
    assert seen == [
        [net, bot, net, bot],
        [net] * 4,
        [bot, net, bot, net],
        [net] * 4,
    ]


def test_honeymoon_match_rows_come_from_every_deal_of_the_match():
    """From the shipped Honeymoon model, a round plays whole matches to 14 and labels
    the decisive stage-2 positions of every deal, not only the first (the solver's
    most tricks of the deal: the more tricks, the more match points for the seat or
    the fewer for its opponent)."""
    hm = "pretrained:german_whist_v0.honeymoon"
    loaded = ckpt_io.load(named(hm.removeprefix("pretrained:")))
    options = loaded.env_options
    assert (
        options["variant"] == "honeymoon" and options.get("episode", "match") == "match"
    )
    state = ckpt_io.to_numpy(loaded.tensors["policy"])
    settings = tiny(source=hm, games=2)
    dagger.check_settings(settings)
    data = dagger.play_round(
        ENV, options, state, loaded.manifest["activation"], settings, 0
    )
    n = 54  # the Honeymoon pack
    rows = data.observations[data.decisive]
    assert rows.shape[1] == 8 * n + 18 and len(rows) > 0
    assert (rows[:, 8 * n + 8] == 1).all()  # stage 2
    match_points = rows[:, 8 * n + 16 : 8 * n + 18].sum(1)
    assert (match_points == 0).any() and (match_points > 0).any()
    t, m = data.targets[data.decisive], data.masks[data.decisive]
    assert not (t & ~m).any() and (t.sum(1) < m.sum(1)).all()


def test_round_seeds_are_training_seeds_and_differ_by_round():
    a, b = dagger.round_seeds(0, 0, 50), dagger.round_seeds(0, 1, 50)
    assert all(0 <= x < 2**31 for x in a + b)
    assert set(a).isdisjoint(b) and a == dagger.round_seeds(0, 0, 50)


def _toy(decisive: np.ndarray, n: int = 400) -> tuple[dagger.RoundData, NumpyPolicy]:
    """Rows with feature 0 set are decisive (only action 2 optimal); the others are
    anchor rows, where the source network prefers action 0."""
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(n, 6)).astype(np.float32)
    obs[:, 0] = decisive
    masks = np.ones((n, 4), dtype=bool)
    targets = np.zeros((n, 4), dtype=bool)
    targets[decisive, 2] = True
    w1, b1 = np.zeros((8, 6), np.float32), np.zeros(8, np.float32)
    w1[0, 1] = 1.0  # one unit that sees a feature unrelated to the label
    head_w, head_b = np.zeros((4, 8), np.float32), np.array([1.0, 0, 0, 0], np.float32)
    source = NumpyPolicy(actor_state([(w1, b1)], (head_w, head_b)), "relu")
    data = dagger.RoundData(obs, masks, targets, decisive, {})
    return data, source


@pytest.mark.parametrize("anchor", [1.0, 0.0])
def test_fit_learns_the_sets_and_the_anchor_holds_the_rest(anchor):
    decisive = np.arange(400) % 2 == 0
    data, source = _toy(decisive)
    actor = dagger.Actor(source.state_dict(), "relu")
    torch.manual_seed(0)
    settings = tiny(epochs=40, learning_rate=1e-2, batch_size=50, anchor=anchor)
    held = np.zeros(400, dtype=bool)
    held[:40:2] = True
    figures = dagger.fit_round(actor, source, data, settings, 0, held)
    assert figures.held_out == 20 and figures.held_out_optimal == 1.0
    with torch.no_grad():
        picks = actor.masked_log_probs(
            torch.from_numpy(data.observations[~decisive]),
            torch.from_numpy(data.masks[~decisive]),
        ).argmax(1)
    kept = float((picks == 0).float().mean())
    # with the anchor the unlabelled rows keep the source's move; without it the
    # network moves them to the labelled rows' answer
    assert kept > 0.95 if anchor else kept < 0.5


def test_run_writes_rounds_as_checkpoints(tmp_path):
    run = tmp_path / "run"
    result = dagger.run(tiny(), run, say=lambda _: None)
    assert not result.interrupted and result.rounds_done == 2
    records = json.loads((run / dagger.ROUNDS).read_text())
    assert [r["round"] for r in records] == [1, 2]
    assert records[1]["rows"] > records[0]["rows"]  # the DAgger aggregate
    loaded = ckpt_io.load(run)  # latest.json -> the last round
    assert loaded.path == run / "checkpoints" / "round-2"
    assert loaded.manifest["dagger"]["round"] == 2
    source = ckpt_io.load(named(ENV))
    assert (
        loaded.manifest["dagger"]["source_weights_sha256"]
        == (source.manifest["weights_sha256"])
    )
    assert loaded.manifest["weights_sha256"] != source.manifest["weights_sha256"]
    CheckpointAgent(str(run), ENV)  # ckpt:RUN plays it
    with pytest.raises(ValueError, match="not empty"):
        dagger.run(tiny(), run, say=lambda _: None)


def test_interrupted_run_keeps_rounds_and_resumes_to_the_same_weights(
    tmp_path, monkeypatch
):
    straight = dagger.run(tiny(), tmp_path / "a", say=lambda _: None)
    real = dagger.play_round
    calls = []

    def stop_in_round_two(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(dagger, "play_round", stop_in_round_two)
    cut = dagger.run(tiny(), tmp_path / "b", say=lambda _: None)
    assert cut.interrupted and cut.rounds_done == 1
    assert ckpt_io.load(tmp_path / "b").path.name == "round-1"
    monkeypatch.setattr(dagger, "play_round", real)
    said = []
    # other settings on resume: the stored ones win, and the run says so
    resumed = dagger.run(tiny(games=99), tmp_path / "b", resume=True, say=said.append)
    assert resumed.rounds_done == 2 and "stored settings" in said[0]
    a, b = ckpt_io.load(tmp_path / "a"), ckpt_io.load(tmp_path / "b")
    assert a.manifest["weights_sha256"] == b.manifest["weights_sha256"]
    assert straight.records[1]["decisive"] == resumed.records[1]["decisive"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"games": 0}, "games must be a positive integer"),
        ({"anchor_fraction": 1.5}, "anchor_fraction must lie"),
        ({"learning_rate": 0.0}, "learning_rate must be positive"),
        ({"opponents": ("bogus",)}, "opponent 'bogus'"),
        ({"source": "pretrained:nope"}, "no pretrained agent named nope"),
        ({"source": FORTY_FIVES}, "no exact solver.*its teacher: solver or pimc:N"),
        ({"teacher": "heuristic"}, "teacher must be exact, expert, solver or pimc:N"),
        ({"teacher": "solver"}, "the PIMC teacher labels .* not german_whist_v0"),
        ({"source": FORTY_FIVES, "teacher": "pimc:0"}, "PIMC samples must be"),
    ],
)
def test_bad_settings_fail_before_anything_is_written(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        dagger.run(tiny(**changes), tmp_path / "run", say=lambda _: None)
    assert not (tmp_path / "run").exists()


def test_command_line_one_line_error(tmp_path, capsys):
    code = dagger.main([SOURCE, "--run-dir", str(tmp_path / "r"), "--rounds", "0"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "rounds must be" in err
    assert dagger.main(["nowhere", "--run-dir", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "r").exists()


def test_parlour_dagger_runs_a_round_with_progress_and_refuses_bad_input(
    tmp_path, capsys
):
    """``parlour dagger`` is the module's command: one round with a progress line of
    its games (stderr is not a terminal here), then a checkpoint ``ckpt:`` plays; a
    bad value is one line, exit 2, before the run dir exists."""
    from parlour.cli import main as cli_main

    run = tmp_path / "run"
    args = ["dagger", SOURCE, "--run-dir", str(run), "--rounds", "1", "--games", "6"]
    assert cli_main([*args, "--epochs", "1", "--batch-size", "64"]) == 0
    out, err = capsys.readouterr()
    assert "round 1: 6 games" in out and f"checkpoint: {run}" in out
    assert "round 1: play and label: 100%" in err and "6/6" in err
    CheckpointAgent(str(run), ENV)
    bad = ["dagger", SOURCE, "--run-dir", str(tmp_path / "r"), "--games", "0"]
    code = cli_main(bad)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "games must be" in err
    assert not (tmp_path / "r").exists()


def _renamed_state(state, moved_to: np.ndarray, perm: tuple[int, ...]):
    """The same position with suit s renamed perm[s] (card c becomes moved_to[c])."""

    def mask(m: int) -> int:
        return sum(1 << int(moved_to[c]) for c in range(len(moved_to)) if m >> c & 1)

    out = state.clone()
    out.hands = [mask(h) for h in state.hands]
    out.seen = [mask(h) for h in state.seen]
    out.played, out.trump_mask = mask(state.played), mask(state.trump_mask)
    out.stock = [int(moved_to[c]) for c in state.stock]
    out.dealt = [int(moved_to[c]) for c in state.dealt]
    out.trump = perm[state.trump]
    out.voids = [sum(1 << perm[s] for s in range(4) if v >> s & 1) for v in state.voids]
    out.lead = int(moved_to[state.lead]) if state.lead >= 0 else -1
    return out


@pytest.mark.parametrize("variant", ["german", "honeymoon"])
@pytest.mark.parametrize("seed", range(4))
def test_suit_renaming_renames_observation_mask_and_optimal_moves(seed, variant):
    """A stage-2 position with its suits renamed: its observation, legal cards and
    optimal cards are the original's, renamed by `suit_permutation`'s indices. In
    Honeymoon Whist too: the Jokers stay top trumps of whichever suit is trumps, and
    the rule that a turned Joker makes spades trumps is spent by stage 2."""
    from parlour import envs
    from parlour.agents.solver.german_whist import optimal_moves, random_stage2_state
    from parlour.envs.german_whist.observation import encode, suit_permutation

    game = envs.make(ENV, raw=True, variant=variant).game
    rng = np.random.default_rng(seed)
    state = random_stage2_state(game, 6, rng)
    while game.honeymoon and not (state.hands[0] | state.hands[1]) & game.jokers:
        state = random_stage2_state(game, 6, rng)  # a Joker in play, kept in place
    state.voids = [int(rng.integers(16)), int(rng.integers(16))]
    if seed % 2:  # a trick under way: the follower decides
        game.apply(state, game.legal_actions(state)[0])
    perm = tuple(int(s) for s in rng.permutation(4))
    obs_index, card_index = suit_permutation(game, perm)
    moved_to = np.argsort(card_index)
    renamed = _renamed_state(state, moved_to, perm)
    for seat in (0, 1):
        assert np.array_equal(
            encode(game, renamed, seat), encode(game, state, seat)[obs_index]
        )
    legal = np.zeros(game.deck.size, dtype=bool)
    legal[game.legal_actions(state)] = True
    assert sorted(game.legal_actions(renamed)) == list(
        np.flatnonzero(legal[card_index])
    )
    best = np.zeros(game.deck.size, dtype=bool)
    best[optimal_moves(game, state)] = True
    assert optimal_moves(game, renamed) == list(np.flatnonzero(best[card_index]))


def test_suit_symmetry_fits_and_is_refused_where_suits_differ(tmp_path):
    raw = shipped_copy(ENV, tmp_path / "raw")
    settings = tiny(source=raw, rounds=1, suit_symmetry=True)
    run = dagger.run(settings, tmp_path / "a", say=print)
    assert run.records[0]["held_out_optimal"] is not None
    assert ckpt_io.load(tmp_path / "a").manifest["dagger"]["suit_symmetry"] is True
    other = tiny(source=FORTY_FIVES, suit_symmetry=True)
    with pytest.raises(ValueError, match="suit_symmetry renames the suits"):
        dagger.run(other, tmp_path / "b", say=print)


def test_a_run_stored_before_the_teacher_setting_resumes_with_the_exact_one(tmp_path):
    """Runs written before ``teacher`` (and ``canonical_form``) existed hold no such
    field: they resume with the exact solver, the only teacher there was, on the
    positions as they are."""
    raw = shipped_copy(ENV, tmp_path / "raw")
    dagger.run(tiny(source=raw, rounds=1), tmp_path / "old", say=lambda _: None)
    stored = json.loads((tmp_path / "old" / dagger.SETTINGS).read_text())
    del stored["teacher"], stored["canonical_form"]
    (tmp_path / "old" / dagger.SETTINGS).write_text(json.dumps(stored))
    settings, records = dagger._stored(tmp_path / "old")
    assert settings == tiny(source=raw, rounds=1) and settings.teacher == "exact"
    assert not settings.canonical_form
    assert len(records) == 1
