"""Positions in their canonical form (German Whist's stage 2, the env record's
``canonical_form``): the same game as the real position, checked with the exact
solver; the network that reads them (`CanonicalPolicy`), and DAgger and the refit
that fit it."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from helpers import shipped_copy

from parlour import agents, envs
from parlour.agents.base import Turn
from parlour.agents.checkpoint import CheckpointAgent
from parlour.agents.solver.german_whist import optimal_moves, solve
from parlour.envs.german_whist.observation import canonical_form, suit_permutation
from parlour.training import checkpoint as ckpt_io
from parlour.training import dagger, distil
from parlour.training.arena import play_game
from parlour.training.policy import CanonicalPolicy, NumpyPolicy, make_policy

ENV = "german_whist_v0"
SOURCE = "pretrained:german_whist_v0"


def _renamed(game, state, new_of: np.ndarray):
    """The engine state with card ``c`` renamed ``new_of[c]`` everywhere (trumps
    follow their cards)."""

    def mask(m: int) -> int:
        return sum(1 << int(new_of[c]) for c in range(len(new_of)) if m >> c & 1)

    out = state.clone()
    out.hands = [mask(h) for h in state.hands]
    out.seen = [mask(h) for h in state.seen]
    out.played = mask(state.played)
    out.stock = [int(new_of[c]) for c in state.stock]
    out.dealt = [int(new_of[c]) for c in state.dealt]
    out.lead = int(new_of[state.lead]) if state.lead >= 0 else -1
    if state.last_trick is not None:
        a, b, w = state.last_trick
        out.last_trick = (int(new_of[a]), int(new_of[b]), w)
    trump_card = game.deck.suit_mask[state.trump].bit_length() - 1
    out.trump = int(game.deck.suit[new_of[trump_card]])
    out.trump_mask = game.deck.suit_mask[out.trump] | game.jokers
    out.tricks1, out.tricks2 = list(state.tricks1), list(state.tricks2)
    out.voids, out.match = list(state.voids), list(state.match)
    return out


def _decisions(game, seed: int, games: int):
    """Every decision of ``games`` random games: (state, seat)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = game.new_state()
        seat = game.advance_chance(state, rng)
        while seat >= 0:
            yield state.clone(), seat
            game.apply(state, int(rng.choice(game.legal_actions(state))))
            seat = game.advance_chance(state, rng)


@pytest.mark.parametrize("variant", ["german", "honeymoon"])
def test_the_canonical_position_is_the_same_game(variant):
    """For every stage-2 decision of random games: the canonical observation is the
    observation of the real state with its cards renamed (trumps the first suit, the
    ranks compressed; what stage 2 cannot use cleared), that state has the same value
    and the renamed best cards, and every renaming of the suits has the same canonical
    form. Stage-1 observations stay as they are."""
    game = envs.make(ENV, raw=True, variant=variant).game
    n = game.deck.size
    cleared = [8 * n + 4 + s for s in range(4)]
    if not game.honeymoon:
        cleared += [8 * n + 10, 8 * n + 12, 8 * n + 13]
    renamings = [suit_permutation(game, p) for p in [(1, 0, 2, 3), (3, 2, 0, 1)]]
    stage2 = moved = 0
    for state, seat in _decisions(game, seed=5, games=6 if game.honeymoon else 12):
        obs = game.observe(state, seat)
        canonical, index = canonical_form(game, obs)
        if state.stage == 1:
            assert np.array_equal(canonical, obs)
            assert np.array_equal(index, np.arange(n))
            continue
        stage2 += 1
        assert sorted(index) == list(range(n))
        new_of = np.argsort(index)  # card c is canonical card new_of[c]
        twin = _renamed(game, state, new_of)
        assert twin.trump == 0
        expected = game.observe(twin, seat)
        expected[cleared] = 0.0
        np.testing.assert_array_equal(canonical, expected)
        assert solve(game, twin) == solve(game, state)
        best = sorted(int(new_of[c]) for c in optimal_moves(game, state))
        assert optimal_moves(game, twin) == best
        legal = np.zeros(n, dtype=bool)
        legal[game.legal_actions(state)] = True
        assert game.legal_actions(twin) == list(np.flatnonzero(legal[index]))
        for obs_index, _ in renamings:
            again, _ = canonical_form(game, obs[obs_index])
            np.testing.assert_array_equal(again, canonical)
        moved += not np.array_equal(index, np.arange(n))
    assert stage2 > 100 and moved > stage2 // 2


def test_a_batch_is_each_row_on_its_own():
    game = envs.make(ENV, raw=True).game
    obs = np.stack([game.observe(s, p) for s, p in _decisions(game, 1, 2)])
    together, index = canonical_form(game, obs.reshape(2, -1, obs.shape[1])[:, :10])
    for i, row in enumerate(obs.reshape(2, -1, obs.shape[1])[:, :10].reshape(20, -1)):
        alone, one = canonical_form(game, row)
        np.testing.assert_array_equal(together.reshape(20, -1)[i], alone)
        np.testing.assert_array_equal(index.reshape(20, -1)[i], one)


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    loaded = ckpt_io.load(dagger._source_checkpoint(SOURCE))
    state = ckpt_io.to_numpy(loaded.tensors["policy"])
    rng = np.random.default_rng(seed)
    return {
        k: v + rng.normal(0, 0.05, v.shape).astype(v.dtype) for k, v in state.items()
    }


def test_canonical_policy_reads_the_canonical_position_and_answers_in_real_cards():
    game = envs.make(ENV, raw=True).game
    weights = _weights()
    plain = NumpyPolicy(weights, "relu")
    policy = make_policy(weights, "relu", ENV, game, canonical_form=True)
    assert isinstance(policy, CanonicalPolicy)
    rows = [game.observe(s, p) for s, p in _decisions(game, 2, 3)]
    obs = np.stack(rows)
    canonical, index = canonical_form(game, obs)
    expected = plain.logits(canonical)  # canonical card j is real card index[j]
    got = policy.logits(obs)
    np.testing.assert_allclose(
        np.take_along_axis(got, index, axis=1), expected, rtol=1e-5, atol=1e-5
    )
    for i, row in enumerate(rows):  # one row at a time: the same
        np.testing.assert_allclose(policy.logits(row), got[i], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="forty_fives_v0 has no canonical form"):
        make_policy(weights, "relu", "forty_fives_v0", game, canonical_form=True)


def test_a_checkpoint_that_says_so_plays_the_canonical_network_legally(tmp_path):
    path = shipped_copy(ENV, tmp_path / "flagged", True)
    agent = CheckpointAgent(path, ENV)
    assert isinstance(agent.policy, CanonicalPolicy)
    heuristic = agents.make("heuristic", ENV, seed=0)
    env = envs.make(ENV)
    for seed in range(4):  # an illegal card would raise
        play_game(
            env, [agent, heuristic] if seed % 2 else [heuristic, agent], seed=seed
        )
    game = env.unwrapped.game
    state, seat = next(
        (s, p) for s, p in _decisions(game, 3, 4) if s.stage == 2 and s.lead < 0
    )
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[game.legal_actions(state)] = 1
    turn = Turn(game, state, seat, game.observe(state, seat), mask)
    assert agent.act(turn) in game.legal_actions(state)


def test_a_manifest_value_that_is_not_a_bool_is_refused(tmp_path):
    path = shipped_copy(ENV, tmp_path / "flagged", "yes")
    with pytest.raises(ckpt_io.CheckpointError, match="canonical_form must be true"):
        CheckpointAgent(path, ENV)


def tiny(**changes) -> dagger.Settings:
    base = dagger.Settings(SOURCE, rounds=1, games=6, epochs=1, batch_size=64)
    return dataclasses.replace(base, **changes)


def test_dagger_fits_canonical_rows_stores_real_ones_and_says_so(tmp_path):
    run = dagger.run(tiny(canonical_form=True), tmp_path / "a", say=lambda _: None)
    assert run.records[0]["held_out_optimal"] is not None
    loaded = ckpt_io.load(tmp_path / "a")
    assert loaded.canonical_form and loaded.manifest["dagger"]["canonical_form"]
    assert isinstance(CheckpointAgent(str(tmp_path / "a"), ENV).policy, CanonicalPolicy)
    data = dagger.RoundData.load(tmp_path / "a" / "data" / "round-0.npz")
    game = envs.make(ENV, raw=True).game
    canonical, _ = canonical_form(game, data.observations[data.decisive])
    # the rows are kept as played: the canonical form is the fit's
    assert not np.array_equal(canonical, data.observations[data.decisive])
    # a run from a canonical source is canonical too, and says so
    said: list[str] = []
    dagger.run(tiny(source=str(tmp_path / "a")), tmp_path / "b", say=said.append)
    assert "canonical form" in said[0] and ckpt_io.load(tmp_path / "b").canonical_form
    settings = json.loads((tmp_path / "b" / dagger.SETTINGS).read_text())
    assert settings["canonical_form"] is True


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"canonical_form": True, "suit_symmetry": True}, "choose one"),
        (
            {"canonical_form": True, "source": "pretrained:forty_fives_v0"},
            "forty_fives_v0 has no canonical form",
        ),
    ],
)
def test_dagger_refuses_canonical_form_where_it_cannot_be(tmp_path, changes, message):
    if "source" in changes:
        changes["teacher"] = "solver"
    with pytest.raises(ValueError, match=message):
        dagger.run(tiny(**changes), tmp_path / "run", say=lambda _: None)
    assert not (tmp_path / "run").exists()


def test_distil_fits_canonical_rows_and_writes_the_flag(tmp_path):
    dagger.run(tiny(), tmp_path / "rows", say=lambda _: None)
    settings = distil.Settings(
        SOURCE, (str(tmp_path / "rows"),), epochs=1, canonical_form=True
    )
    path, history = distil.run(settings, tmp_path / "out", say=lambda _: None)
    loaded = ckpt_io.load(path)
    assert loaded.canonical_form and loaded.manifest["distil"]["canonical_form"]
    assert len(history) == 2
    bad = dataclasses.replace(settings, suit_symmetry=True)
    with pytest.raises(ValueError, match="choose one"):
        distil.run(bad, tmp_path / "bad", say=lambda _: None)
    assert not (tmp_path / "bad").exists()


def test_expert_teacher_labels_where_the_search_overrides_the_network(monkeypatch):
    """The ``expert`` teacher: in stage 1 a label only where PIMC over the network's
    card plays a card of another class (the label is that class, without the
    network's card), in stage 2 the exact solver's optimal cards; a game's labels
    depend on its deal only."""
    from parlour.agents.solver.german_whist import pimc_choice

    loaded = ckpt_io.load(dagger._source_checkpoint(SOURCE))
    state = ckpt_io.to_numpy(loaded.tensors["policy"])
    args = (ENV, {}, state, "relu", False)
    jobs = [(s, [True, False], "heuristic") for s in dagger.round_seeds(5, 0, 6)]

    def stage1_and_2(rows):  # decisive rows of each stage (8n + 8: the stage-2 flag)
        stage2 = rows.observations[:, 8 * 52 + 8] > 0.5
        return rows.decisive & ~stage2, rows.decisive & stage2

    data = dagger._play_chunk((*args, jobs, 1.0, 7, "expert"))
    first, second = stage1_and_2(data)
    assert first.any() and second.any()
    # the network's own card is never in a stage-1 label: it was overridden
    network = CheckpointAgent(str(loaded.path), ENV, suit_average=False).policy
    picks = network.logits(data.observations[first])
    picks = np.where(data.masks[first], picks, -np.inf).argmax(1)
    assert not data.targets[first][np.arange(len(picks)), picks].any()
    again = dagger._play_chunk((*args, jobs[3:], 1.0, 7, "expert"))
    tail = slice(len(data.decisive) - len(again.decisive), None)
    np.testing.assert_array_equal(again.targets, data.targets[tail])
    # the teacher searches with the expert's budget: a margin above the samples never
    # overrides the network, and stage 1 then has no labels (it had some in these games)
    head = slice(0, len(data.decisive) - len(again.decisive))
    assert first[head].any()
    from parlour.envs.german_whist import hooks

    above = hooks.EXPERT_SAMPLES["german"] + 1
    monkeypatch.setitem(hooks.EXPERT_MARGIN, "german", above)
    never_first, never_second = stage1_and_2(
        dagger._play_chunk((*args, jobs[:3], 1.0, 7, "expert"))
    )
    assert not never_first.any() and never_second.any()
    # pimc_choice is what pimc_card plays
    game = envs.make(ENV, raw=True).game
    st, seat = next((s, p) for s, p in _decisions(game, 4, 2) if s.stage == 1)
    cards, _ = pimc_choice(game, st, seat, 8, np.random.default_rng(3))
    from parlour.agents.solver.german_whist import pimc_card

    assert pimc_card(game, st, seat, 8, np.random.default_rng(3)) == cards[0]
    with pytest.raises(ValueError, match="teacher 'expert' labels german_whist_v0"):
        dagger.Teacher("expert", "forty_fives_v0", {})
