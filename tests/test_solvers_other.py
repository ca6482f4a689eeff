"""The exact trick-play solvers and PIMC bots of Forty-Fives, Fünfzehnern and Herzeln.

The solvers are checked against plain minimax over the engines' own ``legal_actions`` /
``apply`` on small random positions, and their trick rules against the engines'; the
PIMC bots for legality, for samples that agree with what the seat has seen, and for
their spec strings.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import play_turns, swap_lowest_cards

from parlour import agents
from parlour.agents.base import Agent
from parlour.agents.solver import forty_fives as sff
from parlour.agents.solver import fuenfzehnern as sfz
from parlour.agents.solver import herzeln as shz
from parlour.agents.solver.tricks import (
    Knowledge,
    advance_random,
    consistent,
    deal_hidden,
    turn_for,
)
from parlour.envs.core.engine import TERMINAL
from parlour.envs.forty_fives import rules as ffr
from parlour.envs.forty_fives.rules import FortyFives
from parlour.envs.forty_fives.state import Phase as FFPhase
from parlour.envs.forty_fives.state import State as FFState
from parlour.envs.fuenfzehnern.rules import ZWANG, Fuenfzehnern
from parlour.envs.fuenfzehnern.state import Phase as FZPhase
from parlour.envs.herzeln.rules import CONTRACTS, Herzeln
from parlour.envs.herzeln.state import Phase as HZPhase


# --- plain minimax over the engines -------------------------------------------------
def ff_minimax(game: FortyFives, st, team: int) -> int:
    """The side's deal points by paranoid minimax over the engine itself."""
    p = game.current_player(st)
    if p == TERMINAL:
        bonus = not game.twenty_five and st.bonus_team == team
        return st.deal_points[team] + ffr.BONUS_POINTS * bonus
    values = []
    for a in game.legal_actions(st):
        child = st.clone()
        game.apply(child, a)
        values.append(ff_minimax(game, child, team))
    return max(values) if game.team_of[p] == team else min(values)


def seat_minimax(game, st, seat: int, final) -> int:
    p = game.current_player(st)
    if p == TERMINAL:
        return final(st)
    values = []
    for a in game.legal_actions(st):
        child = st.clone()
        game.apply(child, a)
        values.append(seat_minimax(game, child, seat, final))
    return max(values) if p == seat else min(values)


def check_values(game, st, values: dict[int, int], brute) -> None:
    assert sorted(values) == game.legal_actions(st)
    for a, v in values.items():
        child = st.clone()
        game.apply(child, a)
        assert v == brute(child), (game.render(st), game.action_name(a))


FF_CASES = [
    (players, variant)
    for players in (2, 3, 4, 6)
    for variant in ("forty_fives", "twenty_five", "auction")
]


@pytest.mark.parametrize("players,variant", FF_CASES)
def test_forty_fives_solver_equals_minimax(players, variant):
    game = FortyFives(players=players, variant=variant, episode="deal")
    rng = np.random.default_rng(players * 7 + len(variant))
    for _ in range(6):
        cards = int(rng.integers(1, 4 if players <= 4 else 3))
        st = sff.random_play_state(game, rng, cards)
        team = game.team_of[st.to_play]
        values = sff.move_values(game, st)
        check_values(game, st, values, lambda s, t=team: ff_minimax(game, s, t))


def test_forty_fives_rob_is_searched():
    """A rob still to come in trick 1 (the other seat's, and the seat to act's own
    first turn: each ``rob:X`` and each card, which declines) is part of the search: 2
    players, whole deals, against minimax."""
    game = FortyFives(players=2, episode="deal")
    rng = np.random.default_rng(5)
    robs = {True: 0, False: 0}  # the seat to act may rob / the other seat may
    for _ in range(200):
        st = advance_random(game, rng, 5, lambda s: s.phase == FFPhase.PLAY)
        solver = sff.solver_for(game, st, st.to_play)
        own = solver.rob_seat == st.to_play
        if solver.rob_seat < 0 or robs[own] == 2:
            continue
        robs[own] += 1
        assert own == any(a >= ffr.ROB for a in game.legal_actions(st))
        team = game.team_of[st.to_play]
        values = sff.move_values(game, st)
        check_values(game, st, values, lambda s, t=team: ff_minimax(game, s, t))
        if robs == {True: 2, False: 2}:
            break
    assert robs == {True: 2, False: 2}


def test_forty_fives_trick_rule_matches_engine():
    """Every lead, every other card, every trump suit: the solver's `beats` agrees
    with the engine's `trick_winner`."""
    game = FortyFives(players=2)
    st = FFState(2, 2)
    for trump in range(4):
        t = sff.Tables.of(trump)
        st.trump, st.trump_mask = trump, ffr.TRUMP_MASK[trump]
        for lead in range(52):
            for card in range(52):
                if card == lead:
                    continue
                st.trick = [lead, card]
                engine = game.trick_winner(st)[0] == 1
                assert t.beats(lead, lead, card) == engine, (trump, lead, card)


def test_forty_fives_legal_mask_matches_engine():
    rng = np.random.default_rng(8)
    for players, must in ((4, True), (3, False)):
        game = FortyFives(players=players, void_must_trump=must, episode="deal")
        for _ in range(40):
            st = sff.random_play_state(game, rng)
            solver = sff.solver_for(game, st, st.to_play)
            mask = solver.legal_mask(st.to_play, list(st.trick))
            assert mask == game.legal_mask(st)


FZ_OPTIONS = [
    {},
    {"players": 3},
    {"lead_rules": "relaxed"},
    {"unbeatable_duty_on_first_suit": False},
]


def fz_final(seat):
    return lambda s: s.points[seat]


def check_fuenfzehnern(game, st):
    """The solver's value of every legal action at ``st`` is minimax's: the card
    points of the seat to play."""
    seat = st.to_play
    check_values(
        game,
        st,
        sfz.move_values(game, st),
        lambda s: seat_minimax(game, s, seat, fz_final(seat)),
    )


@pytest.mark.parametrize("options", FZ_OPTIONS)
def test_fuenfzehnern_solver_equals_minimax(options):
    game = Fuenfzehnern(**options)
    rng = np.random.default_rng(len(options) + 11)
    for _ in range(10):
        st = advance_random(
            game, rng, int(rng.integers(1, 4)), lambda s: s.phase == FZPhase.PLAY
        )
        check_fuenfzehnern(game, st)


def test_fuenfzehnern_zwang_positions_equal_minimax():
    """Positions where a Zwang lead is legal, or a Zwang trick is open."""
    game = Fuenfzehnern()
    rng = np.random.default_rng(21)
    found = 0
    for _ in range(3000):
        st = advance_random(game, rng, 3, lambda s: s.phase == FZPhase.PLAY)
        legal = game.legal_actions(st)
        if st.zwang < 0 and not any(a >= ZWANG for a in legal):
            continue
        found += 1
        check_fuenfzehnern(game, st)
        if found == 4:
            break
    assert found >= 2


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("contract", CONTRACTS[:7])
def test_herzeln_solver_equals_minimax(players, contract):
    game = Herzeln(players=players, contract=contract)
    rng = np.random.default_rng(players + 3 * CONTRACTS.index(contract))
    for _ in range(4):
        st = advance_random(
            game, rng, int(rng.integers(1, 4)), lambda s: s.phase == HZPhase.TRICKS
        )
        seat = st.to_play
        check_values(
            game,
            st,
            shz.move_values(game, st),
            lambda s, seat=seat: seat_minimax(
                game, s, seat, lambda t: t.history[-1][1][seat]
            ),
        )


def finish_trick(game, st, rng):
    """Play the open trick out at random; returns the winner the engine names."""
    while True:
        legal = game.legal_actions(st)
        game.apply(st, legal[int(rng.integers(len(legal)))])
        if not st.trick:
            return st.last_trick[2] if st.last_trick else st.leader


@pytest.mark.parametrize("name", ["fuenfzehnern", "herzeln"])
def test_no_trump_trick_rule_matches_engine(name):
    """Random full tricks: the solver's `finish` names the engine's winner."""
    if name == "fuenfzehnern":
        game, mod, phase = Fuenfzehnern(), sfz, FZPhase.PLAY
    else:
        game, mod, phase = Herzeln(contract="tricks"), shz, HZPhase.TRICKS
    rng = np.random.default_rng(4)
    for _ in range(150):
        st = advance_random(game, rng, None, lambda s: s.phase == phase and not s.trick)
        solver = mod.solver_for(game, st, st.to_play)
        leader = st.leader
        winner = finish_trick(game, st, rng)
        trick = list(st.last_trick[1])  # a Zwang flag does not change the winner
        ext = () if name == "fuenfzehnern" else None
        assert solver.finish(trick, leader, ext)[0] == winner


# --- PIMC -----------------------------------------------------------------------------
ENVS = [
    ("forty_fives_v0", {"players": 4, "episode": "deal"}),
    ("forty_fives_v0", {"players": 3, "variant": "auction", "episode": "deal"}),
    ("fuenfzehnern_v0", {}),
    ("herzeln_v0", {"contract": "no_hearts"}),
    ("herzeln_v0", {"contract": "domino"}),
]


def play(env_name, options, specs, seed, on_turn=None):
    """One game: ``specs[s]`` plays seat s (agents from specs); the env raises on an
    illegal action."""
    from parlour import envs

    env = envs.make(env_name, **options)
    bots = [agents.make(spec, env_name, seed=seed + i) for i, spec in enumerate(specs)]

    def choose(turn):
        action = bots[turn.seat].act(turn)
        if on_turn is not None:
            on_turn(turn, bots[turn.seat])
        return action

    play_turns(env, choose, seed)
    env.close()
    return bots


@pytest.mark.parametrize("env_id,options", ENVS)
def test_pimc_plays_legal_moves(env_id, options):
    from parlour import envs

    n = envs.make(env_id, **options).unwrapped.game.num_players
    specs = ["pimc:2"] + ["heuristic"] * (n - 1)
    bots = play(env_id, options, specs, seed=3)
    if "domino" not in options.values():
        assert bots[0].last_values  # it searched at least once


@pytest.mark.parametrize("env_id,options", ENVS[:4])
def test_pimc_search_gives_the_values_act_plays_on(env_id, options):
    """`PIMCAgent.search` is `act`'s search: a twin bot (same seed, same turns) gets
    the values `act` chose by, None exactly where `act` left the move to the base
    bot, and `act`'s move is one of the best. A Forty-Fives robber's first turn is
    not searched (whether to rob is the base bot's call), so the twin acts there."""
    from parlour import envs

    env = envs.make(env_id, **options)
    player, twin = (agents.make("pimc:2", env_id, seed=5) for _ in range(2))
    searched = [0]

    def choose(turn):
        player.last_values = {}
        action = player.act(turn)
        if isinstance(turn.game, FortyFives) and turn.legal_actions()[-1] >= ffr.ROB:
            assert twin.search(turn) is None
            assert twin.act(turn) == action
            return action
        values = twin.search(turn)
        if values is None:
            assert player.last_values == {}
        else:
            searched[0] += 1
            assert values == player.last_values
            assert sorted(values) == turn.legal_actions()
            assert values[action] == max(values.values())
        return action

    play_turns(env, choose, seed=11)
    assert searched[0] > 0


def true_hands_agree(know: Knowledge, hands: list[int]) -> bool:
    return consistent(know, hands)


@pytest.mark.parametrize("env_id,options", ENVS[:4])
def test_samples_agree_with_the_observation(env_id, options):
    """At every decision of seat 0: the real deal satisfies what the bot inferred, and
    every sampled world keeps the seat's hand, the public hand sizes, no played card,
    and no card of a suit a seat has shown void in."""
    rng = np.random.default_rng(0)
    checked = [0]

    def on_turn(turn, bot):
        if turn.seat != 0 or not bot.is_trick_play(turn):
            return
        know = bot.knowledge(turn)
        st = turn.state
        assert true_hands_agree(know, st.hands)
        played = 0
        for p in st.played_by:
            played |= p
        for _ in range(5):
            hands = deal_hidden(know, rng)
            assert consistent(know, hands)
            assert hands[0] == st.hands[0]
            assert [h.bit_count() for h in hands] == [h.bit_count() for h in st.hands]
            union = 0
            for h in hands:
                assert not h & played and not h & union
                union |= h
            voids = getattr(st, "voids", None)
            if voids is not None:
                game = turn.game
                masks = getattr(game, "suit_mask", None) or [
                    0xFF << (8 * s) for s in range(4)
                ]
                for s, h in enumerate(hands):
                    for suit in range(4):
                        if voids[s] >> suit & 1:
                            assert not h & masks[suit]
        checked[0] += 1

    for seed in range(3):
        from parlour import envs

        n = envs.make(env_id, **options).unwrapped.game.num_players
        play(env_id, options, ["pimc:1"] + ["heuristic"] * (n - 1), seed, on_turn)
    assert checked[0] >= 5


def test_forty_fives_inferred_voids():
    """A seat that discards on a plain lead shows the suit (and, with the seed's rule,
    trumps) void; on a trump lead, no trump but protected top trumps."""
    game = FortyFives(players=4)
    c = game.deck.card
    spades, hearts = 0, 1
    # trumps spades: plain hearts led, a club played -> no hearts, no trumps
    out = sff.trick_constraint(game, spades, c("9H"), c("2C"))
    assert out & (1 << c("3H")) and out & (1 << c("2S")) and out & (1 << c("AH"))
    # trumping is always allowed: no inference
    assert sff.trick_constraint(game, spades, c("9H"), c("2S")) == 0
    # trump led (the 2S), a plain card played: only 5S, JS, AH may remain
    out = sff.trick_constraint(game, spades, c("2S"), c("9H"))
    for top in ("5S", "JS", "AH"):
        assert not out >> c(top) & 1
    assert out >> c("KS") & 1
    assert sff.trick_constraint(game, hearts, c("KD"), c("QD")) == 0


def test_deal_hidden_respects_tight_constraints():
    """Cards only one seat may hold always go there; an impossible demand raises."""
    rng = np.random.default_rng(1)
    know = Knowledge(
        seat=0,
        sizes=[2, 2, 2],
        known=[0b11, 0, 0],
        allowed=[0, 0b1100, 0b111100],
        pool=0b111100,
    )
    for _ in range(50):
        hands = deal_hidden(know, rng)
        assert hands[1] == 0b1100 and hands[2] == 0b110000
    bad = Knowledge(0, [2, 3, 2], [0b11, 0, 0], [0, 0b1100, 0b1100], 0b111100)
    with pytest.raises(ValueError):
        bad.check()


def test_pimc_decision_ignores_hidden_cards():
    """Two Fünfzehnern states that differ only in the other hands give the same
    decision (same seed): the bot reads only what its seat knows."""
    game = Fuenfzehnern()
    rng = np.random.default_rng(6)
    for _ in range(50):
        st = advance_random(game, rng, 4, lambda s: s.phase == FZPhase.PLAY)
        seat = st.to_play
        others = [s for s in range(4) if s != seat and not st.voids[s]]
        if len(others) >= 2:
            break
    # swap a card between two other hands that have shown no void
    twin = swap_lowest_cards(st, others[0], others[1])
    assert twin.hands != st.hands
    picks = []
    for state in (st, twin):
        bot = agents.make("pimc:3", "fuenfzehnern_v0", seed=9)
        picks.append(bot.act(turn_for(game, state)))
    assert picks[0] == picks[1]


class FixedMove(Agent):
    """A base policy that always plays one given action (the test's chosen base)."""

    def __init__(self, action: int):
        self.action = action

    def act(self, turn) -> int:
        return self.action


def test_pimc_margin_keeps_the_base_move_unless_the_search_clearly_disagrees():
    """With a margin, PIMC plays the base's move unless the best move's mean over the
    sampled deals beats it by at least the margin: a Forty-Fives position where the
    base plays the move the search values least, searched with the same seed."""
    game = FortyFives(players=4, episode="deal")
    rng = np.random.default_rng(8)
    for _ in range(50):
        st = advance_random(game, rng, 3, lambda s: s.phase == FFPhase.PLAY)
        turn = turn_for(game, st)
        if turn.legal_actions()[-1] >= ffr.ROB:
            continue  # the robber's first turn is not searched
        values = sff.FortyFivesPIMC(4, seed=2).search(turn)
        if values is not None and max(values.values()) > min(values.values()):
            break
    worst = min(values, key=values.get)
    best = max(values.values())
    gain = best - values[worst]
    for margin, keeps in [
        (0.0, False),
        (gain / 2, False),
        (gain, False),  # beaten by exactly the margin: overridden
        (gain + 0.25, True),
        (gain * 3, True),
    ]:
        bot = sff.FortyFivesPIMC(4, seed=2, base=FixedMove(worst), margin=margin)
        move = bot.act(turn)
        assert bot.last_values == values
        if keeps:
            assert move == worst
        else:
            assert values[move] == best


@pytest.mark.parametrize("margin", [-1, -0.5, float("nan"), float("inf"), True, "1"])
def test_pimc_margin_must_be_a_finite_number_at_least_0(margin):
    with pytest.raises(ValueError, match="PIMC margin must be a finite number") as err:
        sff.FortyFivesPIMC(4, margin=margin)
    assert "\n" not in str(err.value)


def test_pimc_bots_play_without_a_margin():
    for kind in ("solver", "pimc:4"):
        assert agents.make(kind, "forty_fives_v0", seed=0).margin == 0.0


# --- specs ----------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["forty_fives_v0", "fuenfzehnern_v0", "herzeln_v0"])
def test_specs(env_id):
    bot = agents.make("pimc:3", env_id, seed=0)
    assert bot.spec == "pimc:3" and bot.samples == 3
    bot = agents.make("solver", env_id, seed=0)
    default = {"forty_fives_v0": sff, "fuenfzehnern_v0": sfz, "herzeln_v0": shz}
    assert bot.spec == "solver"
    assert bot.samples == default[env_id].DEFAULT_SAMPLES
    for spec, message in [
        ("pimc:x", "write pimc:N"),
        ("pimc:0", "1..1000"),
        ("pimc:", "write pimc:N"),
        ("solver:4", "takes no options"),
        ("oracle", f"unknown agent kind 'oracle' for {env_id}"),
    ]:
        with pytest.raises(ValueError, match=message):
            agents.make(spec, env_id)


def test_solvers_reject_other_phases():
    game = Herzeln(contract="domino")
    rng = np.random.default_rng(0)
    st = game.new_state()
    game.advance_chance(st, rng)
    with pytest.raises(ValueError, match="phase DOMINO"):
        shz.move_values(game, st)
    with pytest.raises(ValueError, match="not to act"):
        shz.move_values(Herzeln(contract="tricks"), _tricks_state(rng), seat=-1)


def _tricks_state(rng):
    game = Herzeln(contract="tricks")
    return advance_random(game, rng, 3, lambda s: s.phase == HZPhase.TRICKS)
