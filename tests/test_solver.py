"""Tests of the German Whist / Honeymoon Whist solver and its bots
(``parlour.agents.solver.german_whist``).

The seed (*German Whist*) says of stage 2: "Play stage 2 with both hands
face up. Every card is accounted for by then … There's nothing left to guess, only to
calculate." The solver calculates; these tests check it against brute force over the
engine itself (so the two cannot drift apart), that the solver bot never lets a won
position go, and that the PIMC bot plays legal cards and only uses what its seat may
know.
"""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pytest
from helpers import play_turns

from parlour import agents, envs
from parlour.agents.base import RandomAgent, Turn
from parlour.agents.solver import german_whist as sg
from parlour.envs.core.cards import cards_in, mask_of
from parlour.envs.core.engine import CHANCE, TERMINAL
from parlour.envs.german_whist.rules import GermanWhist
from parlour.envs.german_whist.state import Phase
from parlour.training.arena import play_game

VARIANTS = ("german", "honeymoon")


def make_game(variant: str) -> GermanWhist:
    # episode="deal": a finished Honeymoon deal stays on the table (no next deal)
    return GermanWhist(variant=variant, episode="deal")


def turn_for(game: GermanWhist, state, seat: int | None = None) -> Turn:
    seat = state.to_play if seat is None else seat
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[game.legal_actions(state)] = 1
    return Turn(game, state, seat, game.observe(state, seat), mask)


# --- brute force over the engine ------------------------------------------------------
def brute_value(game: GermanWhist, state, seat: int):
    """Exact value for ``seat`` by plain minimax over the engine's own
    legal_actions/apply: German Whist, True if ``seat`` wins (the engine ends the game
    at the 7th trick); Honeymoon, the stage-2 tricks ``seat`` takes from here on."""

    @cache
    def value(
        hands: tuple[int, int],
        leader: int,
        lead: int,
        to_play: int,
        tricks: tuple[int, int],
    ) -> int:
        st = state.clone()
        st.hands, st.leader, st.lead, st.to_play = list(hands), leader, lead, to_play
        st.tricks2 = list(tricks)
        results = []
        for card in game.legal_actions(st):
            child = st.clone()
            game.apply(child, card)
            if child.phase == Phase.OVER:
                if game.honeymoon:
                    results.append(child.tricks2[seat] - state.tricks2[seat])
                else:
                    results.append(int(child.winner == seat))
                continue
            results.append(
                value(
                    (child.hands[0], child.hands[1]),
                    child.leader,
                    child.lead,
                    child.to_play,
                    (child.tricks2[0], child.tricks2[1]),
                )
            )
        return max(results) if to_play == seat else min(results)

    v = value(
        (state.hands[0], state.hands[1]),
        state.leader,
        state.lead,
        state.to_play,
        (state.tricks2[0], state.tricks2[1]),
    )
    return bool(v) if not game.honeymoon else v


def small_positions(variant: str, count: int, seed: int):
    """Random stage-2 positions with 1-4 cards each, half of them with a card led."""
    game = make_game(variant)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        st = sg.random_stage2_state(game, int(rng.integers(1, 5)), rng)
        if rng.random() < 0.5:
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
        game.check_invariants(st)
        out.append(st)
    return game, out


@pytest.mark.parametrize("variant", VARIANTS)
def test_solver_matches_brute_force_on_small_positions(variant: str) -> None:
    """The solver's value of a position (German: win or lose; Honeymoon: the most
    tricks) equals plain minimax over the engine, for both seats, on 150 random
    positions."""
    game, positions = small_positions(variant, 150, seed=1)
    for st in positions:
        result = sg.solve(game, st)
        seat = st.to_play
        if variant == "german":
            assert result["wins"] == brute_value(game, st, seat), game.render(st)
        else:
            assert result["max_tricks"] == brute_value(game, st, seat), game.render(st)
        pos = sg.Stage2Position.from_state(st)
        ps = sg.PositionSolver(game, st.trump_mask)
        # zero-sum: what one seat can force, the other cannot prevent
        assert ps.max_tricks(pos, 0) + ps.max_tricks(pos, 1) == pos.tricks_left


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_move_value_matches_brute_force(variant: str) -> None:
    """`move_values` gives every legal card (equivalent cards included) the value brute
    force gives the position after it."""
    game, positions = small_positions(variant, 60, seed=2)
    for st in positions:
        seat = st.to_play
        values = sg.move_values(game, st)
        assert sorted(values) == game.legal_actions(st)
        for card, mv in values.items():
            child = st.clone()
            game.apply(child, card)
            if child.phase == Phase.OVER:
                expect = (
                    (child.winner == seat)
                    if variant == "german"
                    else (child.tricks2[seat] - st.tricks2[seat])
                )
            else:
                later = brute_value(game, child, seat)
                expect = (
                    later
                    if variant == "german"
                    else (later + child.tricks2[seat] - st.tricks2[seat])
                )
            got = mv.wins if variant == "german" else mv.tricks
            assert got == expect, (game.render(st), game.action_name(card))


@pytest.mark.parametrize("variant", VARIANTS)
def test_trick_winner_is_the_engines(variant: str) -> None:
    """The solver's trick rule (`Layout.beats`) is the engine's for every pair of cards
    and every trump suit: "The higher card of the suit led wins, unless a trump is
    played, and then the trump wins" (Honeymoon: jokers are the highest trumps)."""
    game = make_game(variant)
    deck = game.deck
    for trump in range(4):
        st = game.new_state()
        st.trump = trump
        st.trump_mask = deck.suit_mask[trump] | game.jokers
        lay = sg.Layout(game, st.trump_mask)
        for lead in range(deck.size):
            for follow in range(deck.size):
                if lead != follow:
                    assert lay.beats(lead, follow) == game._beats(st, lead, follow)


def test_equivalent_cards_are_one_class() -> None:
    """Cards adjacent in rank among the cards left, in one hand, form one class; a card
    of the other hand (or the led card) between them splits them."""
    game = make_game("german")
    deck = game.deck
    lay = sg.Layout(game, deck.suit_mask[0])  # spades trumps
    hand = mask_of(deck.cards(["KH", "JH", "9H", "2C"]))
    remaining = hand | mask_of(deck.cards(["QH", "AC"]))  # 10H, 3C … are played
    classes = lay.classes(hand, remaining)
    names = sorted(sorted(deck.format(c) for c in cls) for cls in classes)
    assert names == [["2C"], ["9H", "JH"], ["KH"]]


def test_stage2_start_positions_are_solved() -> None:
    """A full 13-card stage-2 start is solved (German: win or lose) and its value agrees
    with the seat-swapped question."""
    game = make_game("german")
    rng = np.random.default_rng(5)
    for _ in range(3):
        st = sg.random_stage2_state(game, 13, rng, tricks=(0, 0))
        pos = sg.Stage2Position.from_state(st)
        ps = sg.PositionSolver(game, st.trump_mask)
        wins0 = ps.can_take(pos, 0, 7)
        assert wins0 != ps.can_take(pos, 1, 7)  # 13 is odd: exactly one reaches 7
        assert (ps.max_tricks(pos, 0) >= 7) == wins0


@pytest.mark.parametrize("tt_limit", [50, sg.TT_LIMIT])
def test_a_shared_table_and_any_first_guess_give_brute_force_values(
    tt_limit: int,
) -> None:
    """One solver answers position after position (Honeymoon's most tricks, from every
    first guess, and each "at least k" question) with its table shared between them,
    so parents read the entries their children left, or cleared before every question
    (``tt_limit`` 50); every answer equals plain minimax over the engine on 5- and
    6-card positions."""
    game = make_game("honeymoon")
    rng = np.random.default_rng(7)
    solver = sg.Stage2Solver(tt_limit=tt_limit)
    for i in range(10):
        st = sg.random_stage2_state(game, 5 + i % 2, rng)
        word = sg.Layout.of(game, st.trump_mask).word(st.hands[0], st.hands[1])
        expect = brute_value(game, st, 0)  # seat 0's tricks from here on
        for guess in (None, 0, 2, 5, 13):
            assert solver.max_tricks(word, st.leader, guess) == expect, guess
        for k in range(8):
            assert solver.reach(word, st.leader, k) == (expect >= k), k


# --- the solver bot -------------------------------------------------------------------
def play_out(game: GermanWhist, st, players, rng=None):
    """Play a state to the end with ``players[seat]``."""
    while game.current_player(st) != TERMINAL:
        p = game.current_player(st)
        assert p != CHANCE
        game.apply(st, players[p].act(turn_for(game, st, p)))
    return st


@pytest.mark.parametrize("cards", [4, 7, 10, 13])
def test_solver_bot_never_loses_a_won_position(cards: int) -> None:
    """German Whist: from a stage-2 position the solver says is won, the solver bot
    wins, every time: 20 positions per hand size, against a random defender and against
    a perfect one (the solver bot itself) in turn. Won positions are also reached
    mid-trick (the opponent has led)."""
    game = make_game("german")
    rng = np.random.default_rng(cards)
    bot = sg.SolverAgent(seed=0)
    checked = 0
    while checked < 20:
        st = sg.random_stage2_state(game, cards, rng)
        if checked % 4 == 3:  # the opponent leads a random card first
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
        seat = st.to_play
        if not sg.solve(game, st)["wins"]:
            continue
        players = [None, None]
        players[seat] = bot
        if checked % 2:
            players[1 - seat] = sg.SolverAgent(seed=1)
        else:
            players[1 - seat] = RandomAgent(int(rng.integers(1 << 30)))
        end = play_out(game, st, players)
        assert end.winner == seat, game.render(st)
        checked += 1


def test_solver_bot_takes_the_most_tricks_in_honeymoon() -> None:
    """Honeymoon Whist ("Every trick counts"): the solver bot takes at least the solved
    number of tricks against a random opponent, and exactly that many against itself."""
    game = make_game("honeymoon")
    rng = np.random.default_rng(9)
    for cards in (5, 9):
        for _ in range(8):
            st = sg.random_stage2_state(game, cards, rng)
            seat = st.to_play
            target = sg.solve(game, st)["max_tricks"]
            before = st.tricks2[seat]
            players = [None, None]
            players[seat] = sg.SolverAgent(seed=0)
            players[1 - seat] = RandomAgent(int(rng.integers(1 << 30)))
            end = play_out(game, st.clone(), players)
            assert end.tricks2[seat] - before >= target
            both = [sg.SolverAgent(seed=0), sg.SolverAgent(seed=1)]
            end = play_out(game, st.clone(), both)
            assert end.tricks2[seat] - before == target


def test_a_lost_german_position_keeps_the_most_tricks() -> None:
    """In a lost German position the bot plays a card after which it can still take the
    most tricks (its documented tie-break)."""
    game = make_game("german")
    rng = np.random.default_rng(3)
    found = 0
    while found < 10:
        st = sg.random_stage2_state(game, 6, rng)
        if sg.solve(game, st)["wins"]:
            continue
        values = sg.move_values(game, st)
        card = sg.best_stage2_card(game, st)
        assert values[card].tricks == max(v.tricks for v in values.values())
        found += 1


# --- PIMC -----------------------------------------------------------------------------
def stage1_states(variant: str, count: int, seed: int):
    """Engine states in stage 1 reached by random play (some with a card led)."""
    game = make_game(variant)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        st = game.new_state()
        game.advance_chance(st, rng)
        steps = int(rng.integers(0, 2 * (game.stock_size // 2)))
        for _ in range(steps):
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
        if st.phase == Phase.PLAY and st.stage == 1:
            out.append(st)
    return game, out


@pytest.mark.parametrize("variant", VARIANTS)
def test_samples_never_contradict_the_observation(variant: str) -> None:
    """Every sampled deal keeps the seat's hand, gives the opponent his Seen row and the
    right number of cards, none of them in a suit he has shown void in ("Follow suit if
    you can"), puts the face-up card on top of a stock of the right size, and uses every
    unplayed card exactly once."""
    game, states = stage1_states(variant, 40, seed=4)
    rng = np.random.default_rng(0)
    for st in states:
        seat = st.to_play
        opp = 1 - seat
        know = sg.Knowledge.from_state(game, st, seat)
        voids = know.void_cards(game)
        for _ in range(5):
            w = sg.sample_world(game, know, rng)
            assert w.hands[seat] == st.hands[seat]
            assert w.hands[opp] & st.seen[opp] == st.seen[opp]
            assert w.hands[opp].bit_count() == st.hands[opp].bit_count()
            assert not w.hands[opp] & ~st.seen[opp] & voids
            assert w.stock[0] == st.face_up
            assert len(w.stock) == len(st.stock) - st.stock_pos
            parts = [w.hands[0], w.hands[1], mask_of(w.stock), st.played]
            assert sum(p.bit_count() for p in parts) == game.deck.size
            assert parts[0] | parts[1] | parts[2] | parts[3] == game.deck.all_mask
        # the real deal is one of those the sampler may draw
        assert not st.hands[opp] & ~st.seen[opp] & voids


def hidden_twin(game: GermanWhist, st, seat: int, rng: np.random.Generator):
    """A copy of ``st`` that differs only in what ``seat`` cannot see: one of the
    opponent's hidden cards swapped with a same-suit card of the stock below the face-up
    card (so his shown voids still hold), and the rest of the stock reshuffled."""
    opp = 1 - seat
    hidden = cards_in(st.hands[opp] & ~st.seen[opp])
    below = st.stock[st.stock_pos + 1 :]
    for c in hidden:
        for d in below:
            if game.deck.suit[d] == game.deck.suit[c]:
                swap = {c: d, d: c}
                twin = st.clone()
                twin.hands[opp] = (st.hands[opp] & ~(1 << c)) | (1 << d)
                twin.stock = [swap.get(x, x) for x in st.stock]
                tail = twin.stock[st.stock_pos + 1 :]
                rng.shuffle(tail)
                twin.stock[st.stock_pos + 1 :] = tail
                head = [
                    swap.get(x, x) for x in st.dealt[: len(st.dealt) - len(st.stock)]
                ]
                twin.dealt = head + twin.stock
                return twin
    return None


@pytest.mark.parametrize("variant", VARIANTS)
def test_pimc_only_reads_what_its_seat_may_know(variant: str) -> None:
    """Two states that differ only in the opponent's hidden cards and the unseen stock
    give the PIMC bot (same seed) the same knowledge and the same decision."""
    game, states = stage1_states(variant, 30, seed=6)
    rng = np.random.default_rng(1)
    compared = 0
    for st in states:
        seat = st.to_play
        twin = hidden_twin(game, st, seat, rng)
        if twin is None or len(game.legal_actions(st)) < 2:
            continue
        assert twin.hands[1 - seat] != st.hands[1 - seat]
        game.check_invariants(twin)
        assert np.array_equal(game.observe(st, seat), game.observe(twin, seat))
        assert sg.Knowledge.from_state(game, st, seat) == sg.Knowledge.from_state(
            game, twin, seat
        )
        a = sg.PIMCAgent(2, seed=11, margin=1).act(turn_for(game, st, seat))
        b = sg.PIMCAgent(2, seed=11, margin=1).act(turn_for(game, twin, seat))
        assert a == b
        compared += 1
        if compared == 8:
            break
    assert compared >= 5


@pytest.mark.parametrize("options", [{}, {"variant": "honeymoon", "episode": "deal"}])
def test_pimc_plays_only_legal_cards(options: dict) -> None:
    """Whole games of ``pimc:1`` against random through the env (which raises on an
    illegal card): every card played is in the action mask."""
    env = envs.make("german_whist_v0", **options)
    for g in range(2):
        bots = [agents.make("pimc:1", "german_whist_v0", seed=g), RandomAgent(g)]
        play_game(env, bots[g:] + bots[:g], seed=100 + g)  # pimc in seat g


@pytest.mark.parametrize("variant", VARIANTS)
def test_pimc_keeps_the_base_card_within_the_margin(variant: str) -> None:
    """PIMC improves on its base policy: with a margin no card can reach (German: more
    than the number of samples; Honeymoon: more match points than 27 tricks can swing),
    it plays the base card (or an equivalent one); with the default margin its card is
    legal and among the best-valued or the base card's class."""
    game, states = stage1_states(variant, 12, seed=13)
    for st in states:
        seat = st.to_play
        legal = game.legal_actions(st)
        base = sg.rollout_card(game, st, seat)
        assert base in legal
        rng = np.random.default_rng(0)
        card = sg.pimc_card(game, st, seat, 3, rng, base=base, margin=1000)
        know = sg.Knowledge.from_state(game, st, seat)
        same = next(c for c in sg._stage1_classes(game, st, seat, know) if base in c)
        assert card in same
        values = sg.pimc_values(game, st, seat, 3, np.random.default_rng(1))
        card = sg.pimc_card(game, st, seat, 3, np.random.default_rng(1), base=base)
        assert card in legal
        assert card in same or values[card] == max(values.values())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base": "oracle"}, "base"),
        ({"margin": 0}, "margin"),
        ({"samples": 2.5}, "integer"),
    ],
)
def test_bad_pimc_options_raise(kwargs: dict, message: str) -> None:
    args = {"samples": 4, **kwargs}
    with pytest.raises(ValueError, match=message):
        sg.PIMCAgent(**args)


def test_pimc_over_the_rollout_policy_plays_legal_cards() -> None:
    """``base="rollout"`` (no heuristic bot involved) plays a whole game legally."""
    game, states = stage1_states("german", 1, seed=14)
    st = states[0]
    bots = [sg.PIMCAgent(1, seed=0, base="rollout"), RandomAgent(0)]
    end = play_out(game, st, bots)
    assert end.phase == Phase.OVER


def test_rollout_play_out_follows_the_engine() -> None:
    """The PIMC play-out's stage 1 (draws: "the winner of each trick must take the
    face-up card from the stock. The loser takes the next card face down") ends in the
    hands the engine reaches when the same policy plays through it."""
    for variant in VARIANTS:
        game, states = stage1_states(variant, 10, seed=8)
        for st in states:
            if st.lead >= 0:
                continue
            roll = sg.Rollout(game, st.trump_mask)
            hands, won = list(st.hands), [0, 0]
            stock = st.stock[st.stock_pos :]
            leader = roll.play_out(hands, stock, 0, st.leader, st.played, won)
            eng = st.clone()
            while eng.phase == Phase.PLAY and eng.stage == 1:
                p = eng.to_play
                if eng.lead < 0:
                    card = roll.lead(eng.hands[p], eng.face_up, eng.played)
                else:
                    card = roll.follow(eng.hands[p], eng.lead, eng.face_up, eng.played)
                game.apply(eng, card)
            assert eng.hands == hands
            assert eng.leader == leader
            assert [eng.tricks1[p] - st.tricks1[p] for p in (0, 1)] == won


@pytest.mark.parametrize("variant", VARIANTS)
def test_rollout_cheapest_is_the_first_card_of_least_value(variant: str) -> None:
    """`Rollout._cheapest` is ``min`` over the cards, ascending, by (`_value`,
    strength): of equal cards (an ace of each plain suit) the lowest card id."""
    game = make_game(variant)
    rng = np.random.default_rng(11)
    pack = game.deck.all_mask
    for trump in range(4):
        roll = sg.Rollout(game, game.deck.suit_mask[trump] | game.jokers)
        strength = roll.lay.strength
        for _ in range(200):
            cards = int(rng.integers(1, 1 << 20)) << int(rng.integers(0, 30)) & pack
            out = int(rng.integers(0, 1 << 62)) & pack & ~cards
            if not cards:
                continue
            expect = min(
                cards_in(cards), key=lambda c: (roll._value(c, out), strength[c])
            )
            assert roll._cheapest(cards, out) == expect


# --- registration, specs, quality -----------------------------------------------------
def test_specs_build_the_bots() -> None:
    """``solver`` and ``pimc:N`` are reachable through `parlour.agents.make`."""
    bot = agents.make("solver", "german_whist_v0", seed=0)
    assert isinstance(bot, sg.SolverAgent) and bot.spec == "solver"
    assert bot.samples == sg.DEFAULT_SAMPLES
    bot = agents.make("pimc:7", "german_whist_v0", seed=0)
    assert isinstance(bot, sg.PIMCAgent) and bot.samples == 7 and bot.spec == "pimc:7"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("pimc:x", "pimc:N"),
        ("pimc:", "pimc:N"),
        ("pimc:0", "1..1000"),
        ("pimc:5000", "1..1000"),
        ("solver:3", "no options"),
        ("oracle", "unknown agent kind 'oracle' for german_whist_v0; .*solver, pimc:N"),
    ],
)
def test_bad_specs_raise(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(spec, "german_whist_v0")


@pytest.mark.parametrize("variant", VARIANTS)
def test_optimal_moves_are_every_card_that_keeps_the_value(variant: str) -> None:
    """`optimal_moves` (the imitation labels) are exactly the best cards: German, the
    cards brute force finds winning in a won position, else the most-tricks cards;
    Honeymoon, the most-tricks cards (trick values: `move_values`, checked against
    brute force above)."""
    game, positions = small_positions(variant, 80, seed=3)
    lost = 0
    for st in positions:
        seat = st.to_play
        tricks = {c: v.tricks for c, v in sg.move_values(game, st).items()}
        expect = []
        if variant == "german":
            for card in tricks:
                child = st.clone()
                game.apply(child, card)
                if (
                    child.winner == seat
                    if child.phase == Phase.OVER
                    else brute_value(game, child, seat)
                ):
                    expect.append(card)
            lost += not expect
        if not expect:
            best = max(tricks.values())
            expect = [c for c, t in tricks.items() if t == best]
        assert sg.optimal_moves(game, st) == sorted(expect), game.render(st)
    assert variant != "german" or lost > 0


def test_endgame_agent_is_its_base_corrected_in_stage_2() -> None:
    """``endgame:random`` plays random's cards in stage 1 and never blunders a won
    stage-2 position; where random's card is optimal it keeps it."""
    corrected = agents.make("endgame:random", "german_whist_v0", seed=5)
    assert corrected.spec == "endgame:random"
    quality = sg.stage2_quality(corrected, games=12, seed=2, opponent="random")
    assert quality.critical > 0 and quality.critical_optimal == quality.critical
    assert quality.blunders == 0
    # move by move against a plain random agent with the same seed
    plain = RandomAgent(5)
    corrected.reset(seed=5)
    kept = changed = 0

    def choose(turn: Turn) -> int:
        nonlocal kept, changed
        mine, base = corrected.act(turn), plain.act(turn)
        best = sg.optimal_moves(turn.game, turn.state)
        if best is None:
            assert mine == base
        else:
            assert mine in best
            kept += mine == base
            changed += mine != base
        return mine

    play_turns(envs.make("german_whist_v0"), choose, seed=9)
    assert kept and changed


@pytest.mark.parametrize(
    ("spec", "env_name", "message"),
    [
        ("endgame:", "german_whist_v0", "write endgame:SPEC"),
        ("endgame:nonsense", "german_whist_v0", "unknown agent kind 'nonsense'"),
        ("endgame:random", "forty_fives_v0", "no exact solver labels"),
    ],
)
def test_bad_endgame_specs_raise(spec: str, env_name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(spec, env_name)


def test_optimal_moves_know_nothing_in_stage_1() -> None:
    game, states = stage1_states("german", 3, seed=4)
    assert all(sg.optimal_moves(game, st) is None for st in states)


def test_solver_refuses_stage1_positions() -> None:
    game, states = stage1_states("german", 1, seed=0)
    with pytest.raises(ValueError, match="stage-2"):
        sg.solve(game, states[0])


def test_score_decision_finds_a_blunder() -> None:
    """`score_decision` marks a card that turns a won German position into a lost
    one."""
    game = make_game("german")
    rng = np.random.default_rng(12)
    while True:
        st = sg.random_stage2_state(game, 5, rng)
        values = sg.move_values(game, st)
        wins = {c for c, v in values.items() if v.wins}
        if wins and len(wins) < len(values):
            break
    good, bad = min(wins), min(set(values) - wins)
    score = sg.score_decision(game, st, good)
    assert score.choice and score.critical and score.won and score.optimal
    assert score.tricks_lost == 0
    score = sg.score_decision(game, st, bad)
    assert score.critical and score.won and not score.optimal
    assert score.tricks_lost >= 1
    with pytest.raises(ValueError, match="not a legal card"):
        sg.score_decision(game, st, next(iter(cards_in(st.played))))


@pytest.mark.parametrize("options", [{}, {"variant": "honeymoon", "episode": "deal"}])
def test_solver_bot_is_perfect_by_the_quality_metric(options: dict) -> None:
    """`stage2_quality`: the solver's stage-2 decisions are all optimal and lose
    nothing."""
    q = sg.stage2_quality(sg.PIMCAgent(1, seed=0), games=2, seed=1, env_options=options)
    assert q.decisions > 0
    assert q.optimal_fraction == 1.0 and q.blunders == 0 and q.mean_tricks_lost == 0.0
    assert q.critical_optimal_fraction == 1.0
    assert q.as_dict()["agent"] == "pimc:1"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_kernel_run_as_python_gives_the_same_pimc_values(variant: str) -> None:
    """With numba's JIT off (as this suite sets it) a solver that insists on the
    kernel runs its functions as plain Python with numpy integers: PIMC's compiled
    path then gives the pure-Python values too, with no integer overflow on the way."""
    jit = pytest.importorskip("parlour.agents.solver.german_whist.jit")
    if jit.compiled():
        pytest.skip("numba's JIT is on; tests/test_stage2_jit.py covers the kernel")
    kernel, plain = (sg.Stage2Solver(backend=b) for b in ("numba", "python"))
    assert kernel.kernel is not None and plain.kernel is None
    game, states = stage1_states(variant, 40, seed=13)
    late = [st for st in states if len(st.stock) - st.stock_pos <= 4][:2]
    assert late
    for st in late:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            values = [
                sg.pimc_values(game, st, st.to_play, 2, np.random.default_rng(1), s)
                for s in (kernel, plain)
            ]
        assert values[0] == values[1]
