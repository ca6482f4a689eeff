"""What every batched engine must do alike (`parlour.envs.batch.base`): seeding and
reproducible deals, automatic reset, the state size, bad batch sizes, options,
devices, actions, seats and forced deals refused with one-line errors before anything
changes, illegal actions named with the legal ones, forced deals as dicts and as
chance-outcome arrays alike, the torch unpacking path (the GPU's) equal to numpy's.
Each runs once per engine (`batch_cases.CASES`)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from batch_cases import CASES, Case, as_rows, snapshot

from parlour import envs
from parlour.envs import IllegalActionError, batch
from parlour.envs.core.engine import TERMINAL

ids = [case.id for case in CASES]
each = pytest.mark.parametrize("case", CASES, ids=ids)


def random_actions(games, pick: torch.Generator) -> torch.Tensor:
    """A uniformly random legal action per game."""
    mask = games.legal_mask()
    return (torch.rand(mask.shape, generator=pick) + 2 * mask).argmax(1)


def unchanged(games, before: dict[str, torch.Tensor]) -> bool:
    return all(torch.equal(getattr(games, k), v) for k, v in before.items())


@each
def test_seeding(case: Case) -> None:
    """One seed, one set of deals; ``reset()`` draws on; ``reset(seed)`` repeats."""
    a, b, c = (case.engine(16, seed=s) for s in (5, 5, 6))
    for name in case.dealt:
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert not torch.equal(getattr(a, case.dealt[0]), getattr(c, case.dealt[0]))
    first = snapshot(a)
    a.reset()  # the generator runs on: new deals
    assert not torch.equal(getattr(a, case.dealt[0]), first[case.dealt[0]])
    a.reset(seed=5)
    assert unchanged(a, first)
    assert torch.equal(a.observe(), b.observe())
    if "cards" in case.dealt:  # every deal deals the pack a forced deal deals
        deal = case.random_deals(np.random.default_rng(0), a)[0]
        pack = sorted(case.rules().forced_chance(case.options_of(deal))[1:])
        assert all(sorted(row) == pack for row in a.cards.tolist())


@pytest.mark.parametrize(
    ("case", "options"),
    [(case, o) for case in CASES for o in case.reset_options],
    ids=[f"{case.id}-{i}" for case in CASES for i, _ in enumerate(case.reset_options)],
)
def test_automatic_reset(case: Case, options: dict) -> None:
    """Finished episodes start afresh inside `step` (the engine's own checks of a
    fresh start: ``case.on_step``); two engines with one seed play the same games."""
    a, b = (case.engine(32, seed=7, **options) for _ in range(2))
    pick = torch.Generator().manual_seed(0)
    ended = torch.zeros(32, dtype=torch.bool)
    next_deals = 0
    while not ended.all():
        old = snapshot(a)
        actions = random_actions(a, pick)
        ra, ta = a.step(actions)
        rb, tb = b.step(actions)
        assert torch.equal(ra, rb) and torch.equal(ta, tb)
        assert unchanged(b, snapshot(a))
        assert ra.dtype == torch.float32 and ra.shape == (32, a.num_players)
        if case.zero_sum:
            assert torch.equal(ra.sum(1), torch.zeros(32))
        if case.paid_at_end:
            assert torch.equal(ra.abs().sum(1) > 0, ta)
        next_deals += case.on_step(a, old, ta)
        ended |= ta
    assert next_deals > 0 or not case.next_deals


@each
def test_state_size(case: Case) -> None:
    """B = 65,536 games fit in 4 GB (the issue's memory target), with room."""
    for options in case.sizes:
        per_game = case.engine(8, seed=0, **options).state_bytes()
        assert 0 < per_game and per_game * 65_536 < 4 * 2**30


@each
@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8"])
def test_bad_batch_size(case: Case, bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        case.engine(bad)


@each
def test_bad_options(case: Case) -> None:
    """The scalar env's one-line errors; an unknown option is a TypeError."""
    for options, message in [
        *case.bad_options,
        ({"device": "abacus"}, "device 'abacus'"),
    ]:
        with pytest.raises(ValueError, match=message):
            case.engine(4, **options)
    with pytest.raises(TypeError):
        case.engine(4, no_such_option=1)


@each
def test_illegal_action_names_game_and_legal_moves(case: Case) -> None:
    games = case.engine(4, seed=0)
    mask = games.legal_mask()
    actions = mask.float().argmax(1)
    illegal = [int(x) for x in (~mask[2]).nonzero().flatten()]
    first, other = illegal[0], int((~mask[3]).nonzero()[0])
    actions[2], actions[3] = first, other
    before = snapshot(games), games.generator.get_state()
    name = games.rules.action_name
    legal = " ".join(name(int(x)) for x in mask[2].nonzero().flatten())
    with pytest.raises(IllegalActionError) as err:
        games.step(actions)
    message = str(err.value)
    seat = int(games.to_play[2])
    assert message.startswith(
        f"game 2: action {first} ({name(first)}) is not legal for player_{seat}"
    )
    assert message.endswith(
        f"legal: {legal} (and 1 other game(s) with illegal actions)"
    )
    assert isinstance(err.value, ValueError)
    assert unchanged(games, before[0])  # nothing was played
    assert torch.equal(games.generator.get_state(), before[1])
    actions[3] = mask[3].float().argmax()
    A = games.num_actions
    for action in (A, -1):
        what = rf"\(out of range 0..{A - 1}\)"
        actions[2] = action
        with pytest.raises(
            IllegalActionError, match=rf"game 2: action {action} {what}"
        ):
            games.step(actions)
    for action, what in case.never_legal:
        actions[2] = action
        with pytest.raises(
            IllegalActionError, match=rf"game 2: action {action} {what}"
        ):
            games.step(actions)
    assert unchanged(games, before[0])


@each
@pytest.mark.parametrize(
    "actions", [[0, 1, 0], [[0, 1, 0, 0]], [0.0, 1.0, 0.0, 0.0], [0, 1, 0, 1j]]
)
def test_bad_action_shapes(case: Case, actions: list) -> None:
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        case.engine(4, seed=0).step(actions)


@each
def test_bad_seat(case: Case) -> None:
    games = case.engine(4, seed=0)
    P = games.num_players
    for seat, message in [
        (P, rf"seat must be 0..{P - 1}, got {P}"),
        ([0, 1], "seat must be an int or 4 ints"),
        (1.0, "seat must be an int or 4 ints"),
        (torch.tensor([0, 1, 1, -1]), f"0..{P - 1}"),
    ]:
        with pytest.raises(ValueError, match=message):
            games.observe(seat)
    seats = torch.tensor([0, 1, 1, 0])
    assert torch.equal(games.observe(seats)[2], games.observe(1)[2])
    assert torch.equal(games.observe(seats)[3], games.observe(0)[3])
    assert torch.equal(games.observe(), games.observe(games.to_play))


@each
def test_bad_deals(case: Case) -> None:
    """Malformed forced deals: one-line errors naming the entry, before the
    generator or any game changes."""
    games = case.engine(2, seed=0)
    deals = case.random_deals(np.random.default_rng(0), games)
    before = snapshot(games), games.generator.get_state()
    with pytest.raises(ValueError, match="must give 2 deals, got 1"):
        games.reset(seed=3, deals=deals[:1])
    bad = [
        ({"deal": deals[0]}, r"deals must be a list of 2 .* got dict"),
        ([deals[0], "AS KS"], r"deals\[1\] must be a"),
        (np.ones((3, 4), dtype=np.int64), re.escape(f"shape {case.array_shape}")),
        (np.zeros((2, 4)), "deals as an array must be integers, got torch.float64"),
        *case.malformed(deals),
    ]
    if case.dealer_optional is not None:  # card games: the array form
        rows = as_rows(case, deals, {})
        rows[1, 6] = rows[1, 5]  # a card twice, one missing
        bad.append((rows.copy(), r"deals\[1\]: .*cards must be each card id"))
        rows = as_rows(case, deals, {})
        rows[1, 0] = games.num_players
        P = games.num_players
        bad.append((rows, rf"deals\[1\]: dealer must be a seat 0..{P - 1}, got {P}"))
    for entry, message in bad:
        with pytest.raises(ValueError, match=message):
            games.reset(seed=3, deals=entry)
    assert unchanged(games, before[0])  # refused before anything changed
    assert torch.equal(games.generator.get_state(), before[1])


@each
def test_deals_as_arrays_match_deal_dicts(case: Case) -> None:
    """The chance-outcome array form and the dict form force the same games, whatever
    the seed draws for what they leave open."""
    a, b = case.engine(8, seed=0), case.engine(8, seed=99)
    deals = case.random_deals(np.random.default_rng(3), a)
    a.reset(deals=deals)
    b.reset(deals=as_rows(case, deals, {}))
    assert torch.equal(a.observe(), b.observe())
    assert torch.equal(a.legal_mask(), b.legal_mask())
    rules = case.rules()
    for i in range(8):
        # the chance outcomes used so far: the forced deal (the dice of the roll-off)
        assert case.chance(a, i, TERMINAL) == case.chance(b, i, TERMINAL)
    if case.dealer_optional is None:
        assert torch.equal(a.tape[:, :12], b.tape[:, :12])
        return
    # a whole episode's start is forced: every game is the same
    assert unchanged(b, snapshot(a))
    if case.env_from_entry and case.chance(a, 0, TERMINAL):
        # each game's deal replays it: what the scalar engine parses from both
        for i in range(8):
            assert rules.forced_chance(case.replay(a, i)) == rules.forced_chance(
                case.options_of(deals[i])
            )


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.dealer_optional is not None], ids=lambda c: c.id
)
def test_deal_dicts_without_dealer(case: Case) -> None:
    """Where the scalar env lets a deal leave its dealer out, the engine draws one;
    where it needs it (Forty-Fives: the packets depend on it), the same error."""
    games = case.engine(64, seed=0)
    deals = case.random_deals(np.random.default_rng(4), games)
    for d in deals:
        del (d[0] if isinstance(d, list) else d)["dealer"]
    if not case.dealer_optional:
        with pytest.raises(
            ValueError, match=r"deals\[0\]: a forced deal needs its dealer"
        ):
            games.reset(deals=deals)
        return
    games.reset(deals=deals)
    assert set(games.dealer.tolist()) == set(range(games.num_players))


@pytest.mark.parametrize(
    ("case", "options", "size", "steps"),
    [(case, *u) for case in CASES for u in case.unpacking],
    ids=[f"{case.id}-{i}" for case in CASES for i, _ in enumerate(case.unpacking)],
)
def test_torch_unpacking_path_matches_numpy_path(
    case: Case, options: dict, size: int, steps: int
) -> None:
    """Off CPU the bits are unpacked by torch, on CPU by numpy: the same arrays (the
    torch path is forced here, so a machine without a GPU checks it too)."""
    a, b = (case.engine(size, seed=8, **options) for _ in range(2))
    b._cpu = False
    pick = torch.Generator().manual_seed(1)
    reached = torch.zeros(size, dtype=torch.bool)
    for _ in range(steps):
        assert torch.equal(a.legal_mask(), b.legal_mask())
        for seat in (None, 0, a.num_players - 1):
            assert torch.equal(a.observe(seat), b.observe(seat))
        actions = random_actions(a, pick)
        a.step(actions)
        b.step(actions)
        if case.unpacking_reaches is not None:
            reached |= case.unpacking_reaches(a)
    assert case.unpacking_reaches is None or reached.all()  # e.g. Herzeln's Domino


@each
def test_engine_registry(case: Case) -> None:
    """`make` builds the engine of an env name, with the env's sizes."""
    assert batch.ENGINES[case.env] is case.engine
    games = batch.make(case.env, 3, seed=1, **case.make_options)
    env = envs.make(case.env, **case.make_options)
    assert isinstance(games, case.engine) and games.batch_size == 3
    space = env.observation_space("player_0")
    assert games.observation_size == space["observation"].shape[0]
    assert games.num_actions == space["action_mask"].shape[0]
    assert games.num_players == len(env.possible_agents)
    assert repr(games).startswith(f"{case.engine.__name__}(batch_size=3, ")


def test_registry_covers_registered_envs_only() -> None:
    assert set(batch.ENGINES) <= set(envs.names())
    assert {case.env for case in CASES} == set(batch.ENGINES)
    with pytest.raises(ValueError, match="has no batched engine"):
        batch.make("no_such_env_v0", 3)
