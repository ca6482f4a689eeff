"""The batched Fünfzehn – tot engine plays exactly the scalar engine's game.

`compare` starts `FuenfzehnTotBatch` and one scalar rules engine (`FuenfzehnTot`, the
rules the env wraps) per game, takes the same random legal decisions in both and
compares, before every decision, the player to act, the legal mask, every seat's
observation, and after it the rewards (the change in the engine's returns, as the env
pays them, in float32) and the terminal flags. The dice are chance: the batched engine
reads them from its own tapes, and the faces each game rolled in a step
(`FuenfzehnTotBatch.dice_rolled`, the roll-off passes included) are applied to the
scalar engine as its chance outcomes; every one must be used, no more, so both roll
the same dice at the same moments. A finished game starts afresh in the batch (its
roll-off included) and in the scalar engine, so automatic resets are compared too.
`compare_env` does the same through the env, forcing each game's dice
(`FuenfzehnTotBatch.deal`) with ``env.reset(options={"dice": ...})``. The scalar
engine is the reference: its own tests check it against the seed rule by rule.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parlour import envs
from parlour.envs import IllegalActionError
from parlour.envs.batch import ENGINES, FuenfzehnTotBatch
from parlour.envs.core.engine import CHANCE, TERMINAL
from parlour.envs.fuenfzehn_tot.rules import FuenfzehnTot

ENV = "fuenfzehn_tot_v0"
VARIANTS = envs.VARIANTS[ENV]
IDS = ["-".join(f"{k}={v}" for k, v in opts.items()) for opts in VARIANTS]


def _bits(mask: int) -> list[int]:
    return [a for a in (0, 1) if mask >> a & 1]


def compare(games: int, batch_size: int, seed: int, **options) -> int:
    """Play at least ``games`` games in both engines, comparing every decision;
    returns the number of decisions compared."""
    rng = np.random.default_rng(seed)
    batch = FuenfzehnTotBatch(batch_size, seed=seed, **options)
    game = FuenfzehnTot(**options)
    n = game.num_players

    def feed(state, i: int, dice: list[int]):
        """Apply game i's rolled faces at the scalar engine's chance nodes; a game
        that ends starts afresh. Returns (state, ended, returns at the end)."""
        ended, final = False, None
        for face in dice:
            if game.current_player(state) == TERMINAL:
                ended, final = True, game.returns(state)
                state = game.new_state()
            assert game.current_player(state) == CHANCE, f"game {i}: a die too many"
            game.apply(state, face)
        if game.current_player(state) == TERMINAL:
            ended, final = True, game.returns(state)
            state = game.new_state()
        assert game.current_player(state) != CHANCE, f"game {i}: a die too few"
        return state, ended, final

    states = [
        feed(game.new_state(), i, batch.dice_rolled(i))[0] for i in range(batch_size)
    ]
    finished = decisions = 0
    while finished < games:
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(n)]
        own = batch.observe().numpy()
        actions = np.empty(batch_size, dtype=np.int64)
        before = []
        for i, state in enumerate(states):
            seat = game.current_player(state)
            assert seat == int(batch.to_play[i]), f"game {i}: player to act"
            legal = np.flatnonzero(mask[i])
            assert _bits(game.legal_bits(state)) == legal.tolist(), f"game {i}: mask"
            for s in range(n):
                expected = game.observe(state, s)
                diff = np.flatnonzero(expected != obs[s][i])
                assert diff.size == 0, (
                    f"game {i}, seat {s}: observation differs at {diff.tolist()}: "
                    f"{expected[diff].tolist()} != {obs[s][i][diff].tolist()}"
                )
            assert np.array_equal(own[i], obs[seat][i])
            actions[i] = legal[rng.integers(len(legal))]
            before.append(game.returns(state))
        rewards, terminated = batch.step(torch.from_numpy(actions))
        for i in range(batch_size):
            game.apply(states[i], int(actions[i]))
            states[i], ended, final = feed(states[i], i, batch.dice_rolled(i))
            after = final if ended else game.returns(states[i])
            expected = np.float32(
                [a - b for a, b in zip(after, before[i], strict=True)]
            )
            assert rewards[i].numpy().tolist() == expected.tolist(), (
                f"game {i}: rewards"
            )
            assert bool(terminated[i]) == ended, f"game {i}: terminal flag"
            finished += ended
        decisions += batch_size
    return decisions


def compare_env(games: int, batch_size: int, seed: int, **options) -> int:
    """`compare` through the scalar env, each game's dice forced by reset options."""
    rng = np.random.default_rng(seed)
    batch = FuenfzehnTotBatch(batch_size, seed=seed, **options)
    n = batch.num_players
    agents = [f"player_{s}" for s in range(n)]
    scalar = [envs.make(ENV, **options) for _ in range(batch_size)]
    for i, env in enumerate(scalar):
        env.reset(options=batch.deal(i))
    finished = decisions = 0
    while finished < games:
        mask = batch.legal_mask().numpy()
        obs = [batch.observe(seat).numpy() for seat in range(n)]
        actions = np.empty(batch_size, dtype=np.int64)
        for i, env in enumerate(scalar):
            seat = int(batch.to_play[i])
            assert env.agent_selection == agents[seat], f"game {i}: player to act"
            assert np.array_equal(
                env.unwrapped.observe(agents[seat])["action_mask"],
                mask[i].astype(np.int8),
            ), f"game {i}: legal mask"
            for s in range(n):
                expected = env.unwrapped.observe(agents[s])["observation"]
                assert np.array_equal(expected, obs[s][i]), f"game {i}, seat {s}"
            legal = np.flatnonzero(mask[i])
            actions[i] = legal[rng.integers(len(legal))]
        rewards, terminated = batch.step(torch.from_numpy(actions))
        for i, env in enumerate(scalar):
            env.step(int(actions[i]))
            expected = np.float32([env.rewards[a] for a in agents])
            assert rewards[i].numpy().tolist() == expected.tolist(), f"game {i}"
            done = all(env.terminations[a] for a in agents)
            assert bool(terminated[i]) == done, f"game {i}: terminal flag"
            if done:
                finished += 1
                env.reset(options=batch.deal(i))
        decisions += batch_size
    return decisions


@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_same_game_as_scalar_engine(opts: dict) -> None:
    assert compare(games=200, batch_size=64, seed=1, **opts) > 0


@pytest.mark.parametrize(
    "opts",
    [
        {"players": 2},
        {"players": 3, "matches": 3, "auto_forced_moves": True, "zero_sum": False},
    ],
    ids=["2p", "3p-auto"],
)
def test_same_game_as_scalar_env(opts: dict) -> None:
    assert compare_env(games=60, batch_size=32, seed=1, **opts) > 0


@pytest.mark.parametrize(
    "opts",
    [
        {"players": 2, "matches": 1},
        {"players": 4, "half2_bust": "ends_round", "all_bust": "next_starter"},
        {"players": 3, "auto_stand_at_15_half1": True, "rule2": False},
        {"players": 10, "matches": 3, "rule1": False, "auto_forced_moves": True},
    ],
    ids=["one-match", "ends-round-next-starter", "stand15-no-rule2", "10p-no-rule1"],
)
def test_other_option_combinations(opts: dict) -> None:
    assert compare(games=40, batch_size=32, seed=3, **opts) > 0


@pytest.mark.slow
@pytest.mark.parametrize("opts", VARIANTS, ids=IDS)
def test_same_game_as_scalar_engine_10000_games(opts: dict) -> None:
    assert compare(games=10_000, batch_size=512, seed=2, **opts) > 0


def test_forced_dice_as_options_and_as_arrays() -> None:
    """Reset options (``dice``, ``starter``) and the (B, L) chance-outcome array give
    the same games; the forced faces are the ones rolled."""
    rng = np.random.default_rng(3)
    rows = rng.integers(1, 7, size=(8, 300))
    a, b = FuenfzehnTotBatch(8, seed=0), FuenfzehnTotBatch(8, seed=99)
    a.reset(deals=[{"dice": r.tolist()} for r in rows])
    b.reset(deals=rows)
    assert torch.equal(a.tape[:, :300], b.tape[:, :300])
    assert a.tape[:, :300].tolist() == rows.tolist()
    assert torch.equal(a.observe(), b.observe())
    assert a.dice_rolled(0) == rows[0, : len(a.dice_rolled(0))].tolist()
    c = FuenfzehnTotBatch(4, seed=0)
    c.reset(deals=[{"starter": s, "dice": [None, 6]} for s in (3, 2, 1, 0)])
    assert c.to_play.tolist() == [3, 2, 1, 0]
    assert [c.tape[i, 4 + 1].item() for i in range(4)] == [6] * 4


def test_seeding() -> None:
    a, b, c = (FuenfzehnTotBatch(16, seed=s) for s in (5, 5, 6))
    assert torch.equal(a.tape, b.tape) and torch.equal(a.to_play, b.to_play)
    assert not torch.equal(a.tape, c.tape)
    first = a.tape.clone()
    a.reset()  # the generator runs on: new dice
    assert not torch.equal(a.tape, first)
    a.reset(seed=5)
    assert torch.equal(a.tape, first)


def test_automatic_reset() -> None:
    """A finished game starts afresh (full pool, a new roll-off); two engines with
    one seed roll the same."""
    a, b = (FuenfzehnTotBatch(16, players=2, matches=2, seed=7) for _ in range(2))
    pick = torch.Generator().manual_seed(0)
    ended = torch.zeros(16, dtype=torch.bool)
    while not ended.all():
        actions = (torch.rand(16, 2, generator=pick) + 2 * a.legal_mask()).argmax(1)
        ra, ta = a.step(actions)
        rb, tb = b.step(actions)
        assert torch.equal(ra, rb) and torch.equal(ta, tb)
        assert torch.equal(a.tape, b.tape)
        assert torch.equal(ra.sum(1), torch.zeros(16))  # zero-sum
        assert torch.equal(ra.abs().sum(1) > 0, ta)
        assert (a.pool[ta] == 2).all() and (a.matches[ta] == 0).all()
        assert (a.phase[ta] == 1).all() and (a.rolls[ta] == 0).all()
        ended |= ta


def test_tape_overflow_goes_on_with_fresh_dice() -> None:
    """A game that reads past its tape keeps its unread faces and goes on; `deal`
    then refuses to pretend the tape replays it."""
    batch = FuenfzehnTotBatch(2, players=2, seed=0)
    batch.ptr[0] = batch.tape_width - 1
    last = int(batch.tape[0, -1])
    batch.step(torch.zeros(2, dtype=torch.int64))  # both roll: the last face
    assert batch.dice_rolled(0) == [last]
    assert batch.overflowed.tolist() == [False, False]
    batch.step(torch.zeros(2, dtype=torch.int64))  # past the tape's end
    assert batch.overflowed.tolist() == [True, False]
    # nothing was left unread: a fresh tape, read from its start
    assert batch.ptr[0] == 1 and batch.dice_rolled(0) == [int(batch.tape[0, 0])]
    with pytest.raises(ValueError, match="game 0 used more than its"):
        batch.deal(0)
    assert batch.deal(1)["dice"] == batch.tape[1].tolist()


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8"])
def test_bad_batch_size(bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        FuenfzehnTotBatch(bad)  # type: ignore[arg-type]


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="players must be 2..10"):
        FuenfzehnTotBatch(4, players=11)
    with pytest.raises(ValueError, match="matches must be 1..100"):
        FuenfzehnTotBatch(4, matches=0)
    with pytest.raises(ValueError, match="half2_bust"):
        FuenfzehnTotBatch(4, half2_bust="stays")
    with pytest.raises(ValueError, match="rule1 must be True or False"):
        FuenfzehnTotBatch(4, rule1="yes")
    with pytest.raises(ValueError, match="device 'abacus'"):
        FuenfzehnTotBatch(4, device="abacus")


def test_illegal_action_names_game_and_legal_moves() -> None:
    batch = FuenfzehnTotBatch(4, seed=0)  # every turn starts with a roll
    before = batch.tape.clone(), batch.ptr.clone()
    actions = torch.tensor([0, 0, 1, 1])
    with pytest.raises(IllegalActionError) as err:
        batch.step(actions)
    message = str(err.value)
    assert message.startswith("game 2: action 1 (stand) is not legal for player_")
    assert message.endswith("legal: roll (and 1 other game(s) with illegal actions)")
    assert torch.equal(batch.ptr, before[1]) and torch.equal(batch.tape, before[0])
    with pytest.raises(IllegalActionError, match="game 0: action 2 .out of range"):
        batch.step(torch.tensor([2, 0, 0, 0]))


@pytest.mark.parametrize("actions", [[0, 1, 0], [[0, 1, 0, 0]], [0.0, 1.0, 0.0, 0.0]])
def test_bad_action_shapes(actions: list) -> None:
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        FuenfzehnTotBatch(4, seed=0).step(actions)


def test_bad_deals() -> None:
    batch = FuenfzehnTotBatch(2, seed=0)
    before = batch.tape.clone(), batch.generator.get_state()
    with pytest.raises(ValueError, match="must give 2 deals, got 1"):
        batch.reset(seed=3, deals=[{"dice": [1, 2]}])
    assert torch.equal(batch.tape, before[0])  # refused before anything changed
    assert torch.equal(batch.generator.get_state(), before[1])
    with pytest.raises(ValueError, match=r"deals\[1\]: options\['dice'\]\[1\]"):
        batch.reset(deals=[{"dice": [1]}, {"dice": [1, 7]}])
    with pytest.raises(ValueError, match=r"deals\[0\]: .*has no deal"):
        batch.reset(deals=[{"deal": {}}, {}])
    with pytest.raises(ValueError, match=r"deals\[1\]: every face must be 1..6"):
        batch.reset(deals=np.array([[1, 2], [3, 0]]))
    with pytest.raises(ValueError, match=r"shape \(2, L\)"):
        batch.reset(deals=np.ones((3, 4), dtype=np.int64))


def test_state_size() -> None:
    """B = 65,536 games fit in 4 GB (the issue's memory target), with room."""
    for players in (2, 4, 10):
        per_game = FuenfzehnTotBatch(8, players=players, seed=0).state_bytes()
        assert per_game * 65_536 < 4 * 2**30


def test_engine_registry() -> None:
    assert ENGINES[ENV] is FuenfzehnTotBatch
