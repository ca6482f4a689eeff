"""The German Whist heuristic bot (`parlour.agents.german_whist`).

The rule book's "Strategy tips" (*German Whist*): every tip is a switch of the bot,
and each switch has a scripted position below where turning it off changes the card
played; each scenario's docstring quotes its tip. Also: legal moves in both variants, a
wide margin over random play, seeded determinism, a fingerprint of its decisions (so
that speed work cannot change them), the exact endgame search against brute force, and
blindness to the cards the bot's seat cannot see.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest
from helpers import play_turns

from parlour import agents, envs
from parlour.agents import Turn
from parlour.agents.german_whist import TIPS, GermanWhistHeuristic
from parlour.envs.core.cards import FRENCH_52, FRENCH_54, RANKS
from parlour.envs.german_whist.rules import GermanWhist
from parlour.envs.german_whist.state import Phase
from parlour.training.arena import play_game

ENV = "german_whist_v0"
HEARTS = [r + "H" for r in RANKS]
DIAMONDS = [r + "D" for r in RANKS]


# --- helpers ---------------------------------------------------------------------
def new_env(variant: str, episode: str = "deal"):
    options = {"variant": variant}
    if variant == "honeymoon":
        options["episode"] = episode
    return envs.make(ENV, **options)


def turn_of(env) -> Turn:
    """The `Turn` of the agent to act, built as the arena builds it."""
    raw = env.unwrapped
    agent = env.agent_selection
    obs = env.observe(agent)
    seat = raw.agent_name_mapping[agent]
    return Turn(raw.game, raw.game_state, seat, obs["observation"], obs["action_mask"])


def forced_deal(variant: str, hands, stock_top, dealer: int = 1) -> dict:
    """A deal with the named cards in place; the rest of the pack fills the hands,
    then the stock, in a fixed order (cards the bot's seat does not see)."""
    deck = FRENCH_54 if variant == "honeymoon" else FRENCH_52
    used = {*hands[0], *hands[1], *stock_top}
    rest = [n for n in deck.names if n not in used]
    full = [list(h) for h in hands]
    for h in full:
        while len(h) < 13:
            h.append(rest.pop())
    return {"dealer": dealer, "hands": full, "stock": [*stock_top, *rest]}


def start(variant: str, deal: dict, *cards: str):
    """An env reset to ``deal`` with ``cards`` played in order."""
    env = new_env(variant)
    env.reset(options={"deal": deal})
    for name in cards:
        env.step(env.unwrapped.action_id(name))
    return env


def bot_card(env, **switches) -> str:
    """The card the bot, with ``switches``, plays for the agent to act."""
    bot = GermanWhistHeuristic(seed=0, **switches)
    return env.unwrapped.action_name(bot.act(turn_of(env)))


# Trick 2 positions: player_0 leads AS to trick 1, the bot (player_1, the dealer)
# plays 3S, loses and draws ``hidden``; then player_0 leads 5H for the prize.
TRICK2_HAND = [
    "7H", "2H", "3S", "KS", "9S", "QD", "8D", "5D", "3D", "AD", "JC", "6C", "4C",
]  # fmt: skip


def trick2(variant: str, hand, prize: str, hidden: str = "8C"):
    """Trumps are clubs (the 10C turned up, player_0's prize in trick 1)."""
    deal = forced_deal(variant, [["AS", "5H"], hand], ["10C", hidden, prize])
    return start(variant, deal, "AS", "3S", "5H")


def rigged(p0: list[str], p1: list[str], tail=(), tricks: int = 13):
    """German Whist where player_0 holds the 13 hearts and leads them from the Ace
    down, and player_1 throws his 13 diamonds: player_0 wins the first ``tricks``
    stage-1 tricks, so the face-up cards ``p0`` are his and player_1 draws ``p1``
    (the stock is p0[0], p1[0], p0[1], … then ``tail``)."""
    stock = [c for pair in zip(p0, p1, strict=True) for c in pair] + list(tail)
    cards = [c for pair in zip(HEARTS, DIAMONDS, strict=True) for c in pair]
    deal = {"dealer": 1, "hands": [HEARTS, DIAMONDS], "stock": stock}
    return start("german", deal, *cards[: 2 * tricks])


# --- options ---------------------------------------------------------------------
def test_every_tip_is_a_switch_on_by_default():
    bot = GermanWhistHeuristic()
    assert list(bot.options) == list(TIPS) == [
        "value_prizes", "duck_duds", "win_cheaply", "save_trumps", "long_suit",
        "fight_late", "count_to_seven", "open_hands",
    ]  # fmt: skip
    assert all(bot.options.values())
    made = agents.make("heuristic:-win_cheaply,-open_hands", ENV, seed=3)
    assert isinstance(made, GermanWhistHeuristic)
    assert not made.win_cheaply and not made.open_hands and made.save_trumps
    assert made.spec == "heuristic:-win_cheaply,-open_hands"


def test_unknown_switch_is_a_clear_error():
    with pytest.raises(ValueError, match="valid options: value_prizes, duck_duds"):
        GermanWhistHeuristic(win_cheaplly=False)
    with pytest.raises(ValueError, match="typo"):
        agents.make("heuristic:-typo", ENV)
    with pytest.raises(ValueError, match="True or False"):
        GermanWhistHeuristic(save_trumps="no")


# --- legal play, strength, determinism ---------------------------------------------
@pytest.mark.parametrize("variant", ["german", "honeymoon"])
def test_plays_only_legal_moves(variant):
    """100 games per variant: the full bot against the bot with one tip off (each in
    turn, then all of them), so every code path plays."""
    env = new_env(variant)
    tips = list(TIPS)
    for game in range(100):
        switched = tips if game % 9 == 8 else [tips[game % 9]]
        other = GermanWhistHeuristic(seed=game, **dict.fromkeys(switched, False))
        players = [GermanWhistHeuristic(seed=game), other]
        if game % 2:
            players.reverse()
        returns = play_game(env, players, seed=game)
        assert sum(returns) == 0 and returns[0] != 0


def test_plays_legal_moves_through_a_honeymoon_match():
    """Deals with alternating dealer until a player has 14 match points."""
    env = new_env("honeymoon", episode="match")
    deals = 0
    for game in range(4):
        players = [GermanWhistHeuristic(seed=game), GermanWhistHeuristic(seed=game + 1)]
        assert sorted(play_game(env, players, seed=100 + game)) == [-1.0, 1.0]
        deals += env.unwrapped.game_state.deal_no
    assert deals > 4  # some match went on after its first deal


@pytest.mark.parametrize(
    ("variant", "threshold"), [("german", 0.88), ("honeymoon", 0.93)]
)
def test_beats_random_by_a_wide_margin(variant, threshold):
    """200 games, seats alternating. Measured with these seeds: German 0.96, Honeymoon
    0.985 (a random player still wins the odd deal that no play can lose). The bot
    with every tip off scores 0.485 and 0.82 and fails."""
    env = new_env(variant)
    wins = 0
    for game in range(200):
        bot = GermanWhistHeuristic(seed=game)
        rnd = agents.RandomAgent(seed=10_000 + game)
        seat = game % 2
        players = [bot, rnd] if seat == 0 else [rnd, bot]
        wins += play_game(env, players, seed=20_000 + game)[seat] > 0
    assert wins / 200 >= threshold


def test_same_seed_same_game_whatever_the_global_rngs():
    """The bot's tie-breaks use its own seeded generator only."""

    def record(disturb: bool) -> list[int]:
        bots = [GermanWhistHeuristic(seed=1), GermanWhistHeuristic(seed=2)]
        actions = []

        def choose(turn: Turn) -> int:
            if disturb:
                np.random.seed(len(actions))
                random.seed(len(actions))
            actions.append(bots[turn.seat].act(turn))
            return actions[-1]

        play_turns(new_env("honeymoon"), choose, seed=5)
        return actions

    assert record(False) == record(True)


# --- behaviour fingerprint -------------------------------------------------------
# Switch sets of the fingerprint: all tips on, the stage-2 tips off one at a time, two
# stage-1 tips off together, and all off.
FINGERPRINT_SWITCHES = [
    (),
    ("open_hands",),
    ("count_to_seven",),
    ("value_prizes", "long_suit"),
    tuple(TIPS),
]
# Full bot against full bot (seeds g and g + 1, env seed g): games where the stage-2
# search budget decides a card. Found by play with NODE_LIMIT 500 or 700 instead of
# 600 (the first two of each and the last two), and with the search keeping its
# bounds from one move to the next (the middle four): that spends less of the budget.
BUDGET_GAMES = {
    "german": [1005, 1014, 1002, 1023, 1126, 1298, 1027, 1040],
    "honeymoon": [1000, 1039, 1084, 1143, 1664, 1758, 1004, 1022],
}
# Recorded from the bot before its speed work (issue 8): sha256 over every action of
# the 66 games below, and the number of actions.
FINGERPRINT = "af2e59b5aed88fc4e5ff16893713299a79a18806f1d26dcc4833e8e9f8960c88"
FINGERPRINT_ACTIONS = 3296


class _Recorder:
    """Passes an agent's actions through and records them."""

    def __init__(self, agent, log: list[int]):
        self.agent, self.log = agent, log

    def act(self, turn: Turn) -> int:
        self.log.append(self.agent.act(turn))
        return self.log[-1]


def _decision_fingerprint() -> tuple[str, int]:
    """66 seeded games: per variant and switch set, four against the full bot (seats
    alternating) and one against random play; then the `BUDGET_GAMES`."""
    log: list[int] = []
    for variant in ("german", "honeymoon"):
        env = new_env(variant)
        for g in BUDGET_GAMES[variant]:
            bots = [GermanWhistHeuristic(seed=g), GermanWhistHeuristic(seed=g + 1)]
            play_game(env, [_Recorder(bot, log) for bot in bots], seed=g)
        for i, off in enumerate(FINGERPRINT_SWITCHES):
            for g in range(5):
                seed = 100 * i + g
                bot = GermanWhistHeuristic(seed=seed, **dict.fromkeys(off, False))
                if g < 4:
                    other = GermanWhistHeuristic(seed=seed + 1)
                else:
                    other = agents.RandomAgent(seed=seed + 1)
                players = [_Recorder(bot, log), _Recorder(other, log)]
                if g % 2:
                    players.reverse()
                play_game(env, players, seed=seed)
    return hashlib.sha256(bytes(log)).hexdigest(), len(log)


def test_decisions_match_the_recorded_fingerprint():
    """Speed work must not change a decision: the committed tip results
    (``docs/tips/german_whist.md``) were measured with this bot. Every action of 66
    seeded games with five switch sets (stage 1, the counting play, the exact endgame
    and its node budget, the seeded tie-breaks) hashes to the value recorded from the
    bot before it was optimised. A change of behaviour is a new bot: re-run the tips
    before re-recording. About a second."""
    assert _decision_fingerprint() == (FINGERPRINT, FINGERPRINT_ACTIONS)


# --- information -----------------------------------------------------------------
class Peeker(GermanWhistHeuristic):
    """A cheat for the test below: it knows where the opponent's cards are."""

    def act(self, turn: Turn) -> int:
        self.real = turn.state.hands[1 - turn.seat]
        return super().act(turn)

    def _p_none(self, t, cards: int) -> float:
        return 0.0 if cards & self.real else 1.0


def _deal_of(game: GermanWhist, state) -> dict:
    """The forced-deal dict that reproduces a dealt state."""
    names = [game.deck.format(c) for c in state.dealt]
    hands = [names[:13], names[13:26]]
    return {"dealer": state.dealer, "hands": hands, "stock": names[26:]}


def _stage1_actions(variant: str, deal: dict) -> tuple[list[int], object]:
    """Bot against bot through stage 1: the actions and the state at the end."""
    env = new_env(variant)
    env.reset(options={"deal": deal})
    bots = [GermanWhistHeuristic(seed=7), GermanWhistHeuristic(seed=8)]
    actions = []
    while env.unwrapped.game_state.stage == 1:
        turn = turn_of(env)
        actions.append(bots[turn.seat].act(turn))
        env.step(actions[-1])
    return actions, env.unwrapped.game_state


def _hidden_swap(game: GermanWhist, deal: dict, end, seat: int) -> dict | None:
    """``deal`` with the cards ``seat`` never saw in stage 1 moved around.

    Those are the opponent's cards outside his Seen row at the end of stage 1: dealt
    cards he kept and his hidden draws. Each trades place with another of its suit (at
    least one of them from the stock), so he holds the same number of each suit at
    every moment and every recorded move stays legal, while what he holds when, and
    the stock order, change.
    """
    opp = 1 - seat
    deck = game.deck
    hidden = end.hands[opp] & ~end.seen[opp]
    new = {
        "dealer": deal["dealer"],
        "hands": [list(h) for h in deal["hands"]],
        "stock": list(deal["stock"]),
    }
    places: dict[int, list[tuple[list[str], int]]] = {}  # suit -> cells with its cards
    for cells in (new["hands"][opp], new["stock"]):
        for i, name in enumerate(cells):
            if hidden >> deck.card(name) & 1:
                places.setdefault(deck.suit[deck.card(name)], []).append((cells, i))
    moved = False
    for cells in places.values():
        if len(cells) < 2 or all(c is new["hands"][opp] for c, _ in cells):
            continue  # nothing to move: one card, or all of them dealt to him
        names = [c[i] for c, i in cells]
        for (c, i), name in zip(cells, names[1:] + names[:1], strict=True):
            c[i] = name  # rotate: every card changes place
        moved = True
    return new if moved else None


def _hidden_info_mismatches(variant: str, bot_class: type, deals: int = 30) -> int:
    """Decisions of ``bot_class`` that change between two deals differing only in
    cards its seat cannot see, along the same stage-1 play."""
    game = GermanWhist(variant=variant, episode="deal")
    checked = mismatches = 0
    for seed in range(100):
        env = new_env(variant)
        env.reset(seed=seed)
        deal = _deal_of(game, env.unwrapped.game_state)
        seat = seed % 2
        actions, end = _stage1_actions(variant, deal)
        other = _hidden_swap(game, deal, end, seat)
        if other is None:
            continue
        env_a, env_b = new_env(variant), new_env(variant)
        env_a.reset(options={"deal": deal})
        env_b.reset(options={"deal": other})
        bot_a, bot_b = bot_class(seed=seed), bot_class(seed=seed)
        differs = False
        for action in actions:
            turn_a, turn_b = turn_of(env_a), turn_of(env_b)
            if turn_a.seat == seat:
                differs |= turn_a.state.hands[1 - seat] != turn_b.state.hands[1 - seat]
                mismatches += bot_a.act(turn_a) != bot_b.act(turn_b)
            env_a.step(action)
            env_b.step(action)  # the same card: legal in both deals by construction
        assert differs
        checked += 1
        if checked == deals:
            return mismatches
    raise AssertionError("too few deals with hidden cards to move")


@pytest.mark.parametrize("variant", ["german", "honeymoon"])
def test_stage1_choices_ignore_cards_the_seat_cannot_see(variant):
    """Two deals that differ only in the opponent's hidden cards and the order of the
    unseen stock: every stage-1 decision of the bot's seat is the same.

    The seed: "The loser takes the next card face down without showing it."
    """
    assert _hidden_info_mismatches(variant, GermanWhistHeuristic) == 0


def test_a_peeking_bot_would_be_caught():
    """The check above has teeth: a bot that judges its leads by the opponent's real
    hand changes some of its decisions."""
    assert _hidden_info_mismatches("german", Peeker) > 0


# --- the exact endgame -----------------------------------------------------------
def _can_win(game: GermanWhist, state, me: int) -> bool:
    """Brute force: can ``me`` reach 7 stage-2 tricks against any defence?"""
    if state.phase == Phase.OVER:
        return state.winner == me
    results = []
    for action in game.legal_actions(state):
        child = state.clone()
        game.apply(child, action)
        results.append(_can_win(game, child, me))
    return any(results) if state.to_play == me else all(results)


def test_exact_endgame_never_throws_away_a_won_game():
    """open_hands: "There’s nothing left to guess, only to calculate." In random German
    endgames of five cards each where the side to move can force its 7th trick, the
    bot's card still forces it (brute force through the engine)."""
    game = GermanWhist()
    rng = np.random.default_rng(0)
    bot = GermanWhistHeuristic(seed=0)
    won = 0
    while won < 25:
        state = game.new_state()
        while game.current_player(state) < 0 and state.phase != Phase.OVER:
            for outcome in game.sample_chance(state, rng):
                game.apply(state, outcome)
        while state.phase == Phase.PLAY and not (
            state.stage == 2 and state.hands[state.to_play].bit_count() == 5
        ):
            legal = game.legal_actions(state)
            game.apply(state, legal[int(rng.integers(len(legal)))])
        if state.phase != Phase.PLAY:
            continue
        me = state.to_play
        if not _can_win(game, state, me):
            continue
        mask = np.zeros(game.num_actions, dtype=np.int8)
        mask[game.legal_actions(state)] = 1
        card = bot.act(Turn(game, state, me, np.zeros(1), mask))
        child = state.clone()
        game.apply(child, card)
        assert _can_win(game, child, me), game.render(state)
        won += 1


# --- one scripted position per tip -------------------------------------------------
def test_value_prizes():
    """value_prizes: "Stage 1 is where you choose your stage-2 hand. … judge each
    prize by what it does for that hand."

    The prize is the 3 of trumps. By rank it is a dud; for the stage-2 hand it is a
    trump. The bot wins it with the 7H; judging by rank alone, it throws the 2H.
    """
    env = trick2("german", TRICK2_HAND, prize="3C")
    assert bot_card(env) == "7H"
    assert bot_card(env, value_prizes=False) == "2H"


def test_duck_duds():
    """duck_duds: "In stage 1, win only the tricks whose face-up card you want. If
    it’s a dud, throw your lowest card of the led suit: the loser still draws the
    hidden card underneath."

    The prize is the 2D, a dud: the bot throws its lowest heart rather than win it.
    """
    env = trick2("german", TRICK2_HAND, prize="2D")
    assert bot_card(env) == "2H"
    assert bot_card(env, duck_duds=False) == "7H"


def test_win_cheaply():
    """win_cheaply: "Win cheaply. A prize taken with your Ace spends a card that was
    going to win a stage-2 trick anyway. Take it with the lowest card that still
    wins."

    Trick 1: the prize is the 10 of trumps, the opponent leads 5H. The bot takes it
    with the 7H; with the tip off, with the Ace.
    """
    hand = ["AH", "7H", "2H", "KS", "9S", "4S", "QD", "8D", "5D", "3D", "JC", "6C"]
    env = start("german", forced_deal("german", [["5H"], [*hand, "4C"]], ["10C"]), "5H")
    assert bot_card(env) == "7H"
    assert bot_card(env, win_cheaply=False) == "AH"


def test_save_trumps():
    """save_trumps: "Trumps are stage-2 cards. Every trump spent on a stage-1 prize is
    one fewer for the 13 tricks that count."

    Void in the hearts led, the bot keeps its 2 of trumps and lets the KH prize go
    with a small diamond; with the tip off it trumps.
    """
    hand = ["3S", "2C", "KS", "QS", "JS", "9S", "4S", "AD", "KD", "QD", "8D", "5D"]
    env = trick2("german", [*hand, "3D"], prize="KH", hidden="7S")
    assert bot_card(env) == "3D"
    assert bot_card(env, save_trumps=False) == "2C"


def test_long_suit():
    """long_suit: "Build one long suit. Stage 2 still follows suit, so a five-card
    suit headed by two winners runs and drags their small cards out."

    Void in the hearts led and not fighting for the 2H prize, the bot throws a spade
    and keeps its eight diamonds; with the tip off, a diamond goes.
    """
    hand = ["3S", "9S", "8S", "2D", "3D", "4D", "5D", "6D", "8D", "9D", "2C", "3C"]
    env = trick2("german", [*hand, "4C"], prize="2H", hidden="7D")
    assert bot_card(env) == "8S"
    assert bot_card(env, long_suit=False).endswith("D")


def test_fight_late():
    """fight_late: "Fight for prizes late in stage 1. Every card drawn face up stays
    in the Seen row until it’s played, so by the last few tricks you can name most of
    what they hold and judge what a prize does to your stage-2 hand."

    The last stage-1 trick: the opponent leads 2H for the JS (a trump), and the bot,
    void in hearts, trumps it with its 2S. With the tip off, the prize weighs no more
    than in trick 1, too little for a trump: the bot throws the 2C.
    """
    p0 = ["AS", "KS", "9S", "8S", "7S", "4S", "3S", "KC", "JC", "9C", "5C", "4C"]
    p1 = ["QS", "10S", "6S", "2S", "AC", "QC", "10C", "8C", "7C", "6C", "3C", "2C"]
    env = rigged(p0, p1, tail=["JS", "5S"], tricks=12)
    env.step(env.unwrapped.action_id("2H"))
    assert env.unwrapped.game_state.face_up == env.unwrapped.action_id("JS")
    assert bot_card(env) == "2S"
    assert bot_card(env, fight_late=False) == "2C"


def test_count_to_seven():
    """count_to_seven: "Count to 7, not 13. … In Honeymoon Whist every trick counts
    toward the margin, so keep taking tricks even after the 7th."

    Honeymoon, trick 2, a dud prize (2D): the trick itself is one of the 27 that
    score, so the bot takes it with the 7H. With the tip off it plays as if only
    stage 2 counted and ducks with the 2H.
    """
    env = trick2("honeymoon", TRICK2_HAND, prize="2D")
    assert bot_card(env) == "7H"
    assert bot_card(env, count_to_seven=False) == "2H"


def test_open_hands():
    """open_hands: "Play stage 2 with both hands face up. Every card is accounted for
    by then, so the game opens the hands: count their trumps, work out which of your
    suits runs, and lead accordingly."

    Spades are trumps. The bot holds seven top trumps to the opponent's six, and small
    clubs to his top ones: it draws trumps with the Ace (six rounds, and its last
    trump is the 7th trick). Ignoring his hand, it leads its best club into his Ace.
    """
    p0 = ["AS", "KS", "QS", "JS", "10S", "9S", "8S", "2C", "3C", "4C", "5C", "6C", "7C"]
    p1 = ["7S", "6S", "5S", "4S", "3S", "2S", "AC", "KC", "QC", "JC", "10C", "9C", "8C"]
    env = rigged(p0, p1)
    assert env.unwrapped.game_state.stage == 2
    assert bot_card(env) == "AS"
    assert bot_card(env, open_hands=False) == "7C"
