"""Scenario tests for ``herzeln_v0`` (the rule book with the rules notes §4).

Each test forces an exact deal with ``reset(options={"deal": …})`` and checks one rule;
the docstrings quote the seed sentence or the rules-notes point it rests on.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import hands_of, random_decisions, swap_lowest_cards

from parlour import envs
from parlour.envs.core.engine import CHANCE, IllegalActionError
from parlour.envs.core.soak import soak
from parlour.envs.herzeln.rules import CONTRACTS, DEAL_TOTALS, Herzeln

RANKS = {
    3: ("A", "K", "Q", "J", "10", "9"),
    4: ("A", "K", "Q", "J", "10", "9", "8", "7"),
}
SUITS = "SHDC"
# The game's trick order, high first, written out independently of the engine.
TRICK_ORDER = ("A", "10", "K", "Q", "J", "9", "8", "7")


# --- helpers --------------------------------------------------------------------------
def make(**options):
    return envs.make("herzeln_v0", **options)


def pack(n: int) -> list[str]:
    return [r + s for s in SUITS for r in RANKS[n]]


def fill(n: int, fixed: list[list[str]]) -> list[list[str]]:
    """Hands of 8 that contain ``fixed[i]``, the rest of the pack dealt in pack
    order."""
    rest = [c for c in pack(n) if not any(c in h for h in fixed)]
    hands = []
    for h in fixed:
        need = 8 - len(h)
        hands.append(list(h) + rest[:need])
        rest = rest[need:]
    assert not rest
    return hands


def start(n: int, hands: list[list[str]], dealer: int, **options):
    env = make(players=n, **options)
    env.reset(seed=0, options={"deal": {"dealer": dealer, "hands": hands}})
    return env


def names(env) -> list[str]:
    raw = env.unwrapped
    return [raw.action_name(a) for a in raw.legal_actions()]


def to_play(env) -> int:
    return env.unwrapped.agent_name_mapping[env.agent_selection]


def step(env, name: str) -> list[float]:
    """Play ``name`` (it must be legal) and return the step's rewards by seat."""
    assert name in names(env), f"{name} not legal; legal: {names(env)}"
    env.step(env.unwrapped.action_id(name))
    raw = env.unwrapped
    return [raw.rewards[a] for a in raw.possible_agents]


def play_first_legal(env) -> None:
    raw = env.unwrapped
    while not all(raw.terminations.values()):
        env.step(raw.legal_actions()[0])


def suit_deal(n: int) -> list[list[str]]:
    """Every seat holds two cards of each suit; seat s holds the A and 10 of suit s (3
    players: seat 0 also holds the A and 10 of clubs). Everyone can always follow, so
    each trick is of one suit and is won by the holder of that suit's A and 10, whatever
    is played.
    """
    ranks = RANKS[n]
    owner = {s: s if s < n else 0 for s in range(4)}
    hands: list[list[str]] = [[] for _ in range(n)]
    for s, suit in enumerate(SUITS):
        top = owner[s]
        hands[top] += ["A" + suit, "10" + suit]
        low = [r + suit for r in ranks if r not in ("A", "10")]
        others = [p for p in range(n) if p != top]
        for i, p in enumerate(others):  # the low cards, two to each other seat
            hands[p] += low[2 * i : 2 * i + 2]
    assert all(len(h) == 8 for h in hands), [len(h) for h in hands]
    return hands


# --- cards, ranking, following --------------------------------------------------------
@pytest.mark.parametrize(
    "n, size, ranks", [(3, 24, "A K Q J 10 9"), (4, 32, "A K Q J 10 9 8 7")]
)
def test_pack_per_size(n, size, ranks):
    """Seed: "In three-hand games a pack of 24 French playing cards is used … In
    four-player games, the standard German 32-card pack is used"; rules-notes §4.3: 8
    cards each."""
    env = make(players=n)
    env.reset(seed=3)
    raw = env.unwrapped
    assert raw.game.deck.size == size
    assert sorted(r[:-1] for r in raw.game.deck.names[: size // 4]) == sorted(
        ranks.split()
    )
    assert [h.bit_count() for h in raw.game_state.hands] == [8] * n
    assert raw.game.num_actions == 3 * size + 1


def ranking_deal(n: int, led: str, follow: str) -> list[list[str]]:
    """Seat 0 holds ``led`` and seat 1 ``follow`` (both spades), the other seats hold no
    spade and must discard."""
    spades = [r + "S" for r in RANKS[n] if r + "S" not in (led, follow)]
    if n == 4:
        half = len(spades) // 2
        return [
            [led, *spades[:half], "AH", "KH", "QH", "JH"],
            [follow, *spades[half:], "10H", "9H", "8H", "7H"],
            [r + "D" for r in RANKS[4]],
            [r + "C" for r in RANKS[4]],
        ]
    return [
        [led, *spades[:2], "AH", "KH", "QH", "AD", "KD"],
        [follow, *spades[2:], "JH", "10H", "9H", "QD", "JD"],
        ["10D", "9D", *[r + "C" for r in RANKS[3]]],
    ]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize(
    "led, follow, winner",
    [
        ("KS", "10S", 1),  # the Ten ranks above the King
        ("10S", "KS", 0),
        ("10S", "AS", 1),
        ("QS", "KS", 1),
        ("JS", "QS", 1),
        ("9S", "JS", 1),
        ("AS", "10S", 0),
        ("JS", "9S", 0),
    ],
)
def test_trick_ranking_ten_above_king(n, led, follow, winner):
    """Seed: "Ace (high) – Ten – King – Queen – Jack – Nine (low)" (3 players) and
    "Deuces [Daus] (high) – Ten – King – Ober – Unter – Nine - Eight - Seven (low)" (4
    players)."""
    env = start(n, ranking_deal(n, led, follow), dealer=n - 1, contract="tricks")
    step(env, led)
    step(env, follow)
    for _ in range(n - 2):
        step(env, names(env)[0])  # a discard: these seats hold no spade
    assert env.unwrapped.game_state.tricks[winner] == 1


@pytest.mark.parametrize(
    "led, follow, winner",
    [("9S", "8S", 0), ("8S", "9S", 1), ("7S", "8S", 1), ("8S", "7S", 0)],
)
def test_low_german_ranks(led, follow, winner):
    """Seed: "… Unter – Nine - Eight - Seven (low)" in the four-player pack."""
    env = start(4, ranking_deal(4, led, follow), dealer=3, contract="tricks")
    step(env, led)
    step(env, follow)
    step(env, "AD")
    step(env, "AC")
    assert env.unwrapped.game_state.tricks[winner] == 1


def test_off_suit_card_never_wins():
    """Seed: "There is no trump suit; but players must follow suit": an Ace of another
    suit does not beat a Nine of the suit led."""
    env = start(4, ranking_deal(4, "9S", "JS"), dealer=3, contract="tricks")
    step(env, "9S")
    step(env, "JS")
    step(env, "AD")
    step(env, "AC")
    assert env.unwrapped.game_state.tricks == [0, 1, 0, 0]


def test_must_follow_suit():
    """Seed: "players must follow suit (Farbzwang)"; rules-notes §4.3: "if void, play
    anything", and any card may be led (no Hearts-style ban on leading hearts)."""
    env = start(4, ranking_deal(4, "KS", "10S"), dealer=3, contract="no_hearts")
    assert sorted(names(env)) == sorted(
        ranking_deal(4, "KS", "10S")[0]
    )  # hearts lead too
    step(env, "KS")
    assert all(c.endswith("S") for c in names(env))  # seat 1 holds spades: only spades
    with pytest.raises(IllegalActionError, match="follow suit.*legal: "):
        env.step(env.unwrapped.action_id("10H"))
    step(env, "10S")
    assert sorted(names(env)) == sorted(r + "D" for r in RANKS[4])  # void: anything
    assert "JS" not in names(env)


@pytest.mark.parametrize(
    "n, dealer", [(3, 0), (3, 1), (3, 2), (4, 0), (4, 1), (4, 2), (4, 3)]
)
def test_dealers_left_leads_first_trick(n, dealer):
    """rules-notes §4.3: "The player on the dealer's left leads trick 1 … After that,
    the trick winner leads." """
    env = start(n, suit_deal(n), dealer=dealer, contract="tricks")
    leader = (dealer + 1) % n
    assert to_play(env) == leader
    # Lead a card of another seat's suit: that seat wins and must lead trick 2.
    other = (leader + 1) % n
    card = next(c for c in names(env) if c.endswith(SUITS[other]))
    step(env, card)
    for _ in range(n - 1):
        step(env, names(env)[0])
    assert env.unwrapped.game_state.tricks[other] == 1
    assert to_play(env) == other


# --- the seven trick contracts --------------------------------------------------------
def hearts_first_trick(n: int, heart: str) -> list[list[str]]:
    """Seat 0 leads the Ace of spades; seat 1 holds no spade and discards ``heart``."""
    if n == 4:
        return [
            [r + "S" for r in RANKS[4]],
            [r + "H" for r in RANKS[4]],
            [r + "D" for r in RANKS[4]],
            [r + "C" for r in RANKS[4]],
        ]
    return [
        [*(r + "S" for r in RANKS[3]), "AC", "KC"],
        [*(r + "H" for r in RANKS[3]), "QC", "JC"],
        [*(r + "D" for r in RANKS[3]), "10C", "9C"],
    ]


@pytest.mark.parametrize(
    "n, heart, points",
    [
        (4, "AH", -11),
        (4, "10H", -10),
        (4, "KH", -4),
        (4, "QH", -3),
        (4, "JH", -2),
        (4, "9H", -1),
        (4, "8H", -1),
        (4, "7H", -1),
        (3, "AH", -11),
        (3, "10H", -10),
        (3, "KH", -4),
        (3, "QH", -3),
        (3, "JH", -2),
        (3, "9H", -1),
    ],
)
def test_no_hearts_card_values(n, heart, points):
    """Seed, No Hearts: "The following points are deducted: Ace: 11, Ten: 10, King: 4,
    Queen: 3, Jack, 2, Nine, Eight and Seven: 1 each" (rules-notes: "Jack, 2" means
    −2)."""
    env = start(n, hearts_first_trick(n, heart), dealer=n - 1, contract="no_hearts")
    step(env, "AS")
    step(env, heart)
    rewards = None
    for _ in range(n - 2):
        rewards = step(env, names(env)[0])
    assert rewards == [points] + [0] * (n - 1)
    assert env.unwrapped.game_state.points[0] == points


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize(
    "contract, expected",
    [
        # suit_deal: seat s takes the tricks of suit s (3 players: seat 0 also clubs)
        ("no_hearts", {4: [0, -33, 0, 0], 3: [0, -31, 0]}),
        ("tricks", {4: [20, 20, 20, 20], 3: [40, 20, 20]}),
        ("no_tricks", {4: [-20, -20, -20, -20], 3: [-40, -20, -20]}),
        ("no_queens", {4: [-20, -20, -20, -20], 3: [-40, -20, -20]}),
        ("king_of_hearts", {4: [0, -40, 0, 0], 3: [0, -40, 0]}),
    ],
)
def test_contract_scores_exact_deal(n, contract, expected):
    """Seed: No Hearts (hearts taken cost A 11 … 1), Tricks ("Each trick taken is worth
    10 points"), No Tricks ("10 points are deducted for each trick taken"), No
    Obers/Queens ("penalised 20 points for each Ober/Queen captured"), King of Hearts
    ("the player who ends up with the King of Hearts in his tricks is penalised 40
    points")."""
    env = start(n, suit_deal(n), dealer=n - 1, contract=contract)
    raw = env.unwrapped
    totals = [0.0] * n
    while not all(raw.terminations.values()):
        env.step(raw.legal_actions()[-1])  # any legal play gives the same result here
        for i, a in enumerate(raw.possible_agents):
            totals[i] += raw.rewards[a]
    assert totals == expected[n]
    assert raw.game.returns(raw.game_state) == expected[n]
    assert sum(expected[n]) == DEAL_TOTALS[n][CONTRACTS.index(contract)]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize(
    "contract, value", [("last_trick", 40), ("no_last_trick", -40)]
)
def test_last_trick_contracts(n, contract, value):
    """Seed: Last Trick "only the last trick counts and is worth 40 points to the
    winner"; No Last Trick "winning the last trick costs 40 minus points". Tricks 1–7
    score nothing."""
    env = start(n, suit_deal(n), dealer=n - 1, contract=contract)
    raw = env.unwrapped
    totals = [0.0] * n
    winners = []
    while not all(raw.terminations.values()):
        before = list(raw.game_state.tricks)
        env.step(raw.legal_actions()[0])
        for i, a in enumerate(raw.possible_agents):
            totals[i] += raw.rewards[a]
        if raw.game_state.tricks != before:
            winners.append(
                next(p for p in range(n) if raw.game_state.tricks[p] != before[p])
            )
            if len(winners) < 8:
                assert totals == [0.0] * n  # nothing scores before the last trick
    # With the lowest action id each time, seat 0 takes both spade tricks, seat 1 the
    # hearts, seat 2 the diamonds, and the clubs go to their owner (seat 3; 3 players:
    # 0).
    assert winners == [0, 0, 1, 1, 2, 2, *([0, 0] if n == 3 else [3, 3])]
    last = winners[-1]
    assert totals == [value if p == last else 0 for p in range(n)]


def reference_points(
    n: int, contract: str, tricks: list[tuple[int, list[str]]]
) -> list[int]:
    """The seed's scoring written out again, independently of the engine: ``tricks`` are
    (leader, cards in play order)."""
    heart_values = {
        "A": -11,
        "10": -10,
        "K": -4,
        "Q": -3,
        "J": -2,
        "9": -1,
        "8": -1,
        "7": -1,
    }
    points = [0] * n
    for i, (leader, cards) in enumerate(tricks):
        suit = cards[0][-1]
        best = max(
            (j for j in range(n) if cards[j][-1] == suit),
            key=lambda j: -TRICK_ORDER.index(cards[j][:-1]),
        )
        w = (leader + best) % n
        for c in cards:
            if contract == "no_hearts" and c.endswith("H"):
                points[w] += heart_values[c[:-1]]
            if contract == "no_queens" and c.startswith("Q"):
                points[w] -= 20
            if contract == "king_of_hearts" and c == "KH":
                points[w] -= 40
        points[w] += {"tricks": 10, "no_tricks": -10}.get(contract, 0)
        if i == 7:
            points[w] += {"last_trick": 40, "no_last_trick": -40}.get(contract, 0)
    return points


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("contract", CONTRACTS[:7])
def test_random_deals_match_reference_and_totals(n, contract):
    """rules-notes §4.3 per-deal totals: No Hearts −33 (4p) / −31 (3p); Tricks +80; No
    Tricks −80; No Queens −80; K♥ −40; Last Trick +40; No Last Trick −40 — and every
    seat's points equal an independent scorer's over random legal play."""
    env = make(players=n, contract=contract)
    raw = env.unwrapped
    rng = np.random.default_rng(5)
    for game_no in range(15):
        env.reset(seed=game_no)
        tricks: list[tuple[int, list[str]]] = []
        current: list[str] = []
        leader = to_play(env)
        totals = [0.0] * n
        while not all(raw.terminations.values()):
            if not current:
                leader = to_play(env)
            legal = raw.legal_actions()
            a = legal[rng.integers(len(legal))]
            current.append(raw.action_name(a))
            env.step(a)
            for i, ag in enumerate(raw.possible_agents):
                totals[i] += raw.rewards[ag]
            if len(current) == n:
                tricks.append((leader, current))
                current = []
        assert len(tricks) == 8
        assert totals == reference_points(n, contract, tricks)
        assert sum(totals) == DEAL_TOTALS[n][CONTRACTS.index(contract)]


def test_early_end_option_stops_after_penalty_cards():
    """rules-notes §4.3 [ENGINE CHOICE] "play all 8 tricks of every deal … stopping
    early (after the last penalty card) never changes the score": ``early_end=True``
    stops the King of Hearts deal once the K♥ is taken, with the same score."""
    hands = hearts_first_trick(4, "KH")
    full = start(4, hands, dealer=3, contract="king_of_hearts")
    early = start(4, hands, dealer=3, contract="king_of_hearts", early_end=True)
    for env in (full, early):
        step(env, "AS")
        step(env, "KH")
        step(env, "AD")
        step(env, "AC")
    assert all(early.unwrapped.terminations.values())
    assert not any(full.unwrapped.terminations.values())
    play_first_legal(full)
    assert early.unwrapped.game.returns(early.unwrapped.game_state) == [-40, 0, 0, 0]
    assert full.unwrapped.game.returns(full.unwrapped.game_state) == [-40, 0, 0, 0]


# --- the Domino deal ------------------------------------------------------------------
def corner_deal(n: int) -> tuple[list[list[str]], list[str]]:
    """A Domino deal and a script that takes both ends of the line round the corner."""
    if n == 4:
        fixed = [["JS", "AS", "7S"], ["QH", "7H", "AH"], ["KD", "9D"], ["10C", "8C"]]
        script = "JS QH@top KD@top 10C@top AS@top 7H@top".split()
        script += "9D@bottom 8C@bottom 7S@bottom AH@bottom".split()
    else:
        fixed = [["JS", "10C", "9D"], ["QH", "AS", "AH"], ["KD", "9H"]]
        script = "JS QH@top KD@top 10C@top AS@top 9H@top".split()
        script += "9D@bottom AH@bottom".split()
    return fill(n, fixed), script


@pytest.mark.parametrize("n", [3, 4])
def test_domino_only_jacks_open(n):
    """Seed: "one begins with a Jack"; rules-notes §4.3: while the layout is empty the
    only legal moves are the Jacks in hand, and the player on the dealer's left
    starts."""
    hands, _ = corner_deal(n)
    env = start(n, hands, dealer=n - 1, contract="domino")
    assert to_play(env) == 0
    jacks = [c for c in hands[0] if c.startswith("J")]
    assert sorted(names(env)) == sorted(jacks)
    with pytest.raises(IllegalActionError, match="only a Jack opens"):
        env.step(env.unwrapped.action_id(hands[0][1]))


@pytest.mark.parametrize("n", [3, 4])
def test_domino_player_without_jack_passes(n):
    """rules-notes §4.3: "a player without a Jack passes"; the next player may open."""
    hands = fill(n, [[], ["JS"], *[[]] * (n - 2)])
    assert not any(
        c.startswith("J") for c in hands[0]
    )  # pack order: A K Q 10 9 … of spades
    env = start(n, hands, dealer=n - 1, contract="domino")
    assert names(env) == ["pass"]
    step(env, "pass")
    assert to_play(env) == 1
    assert "JS" in names(env)
    with pytest.raises(IllegalActionError, match="laying is compulsory"):
        env.step(env.unwrapped.action_id("pass"))


@pytest.mark.parametrize("n", [3, 4])
def test_domino_builds_at_both_ends_and_turns_the_corner(n):
    """Seed: "on which, above and below, cards of any suit may be built in rank order.
    Aces may 'turn the corner' i.e. be placed next to a Seven or Nine to start the
    sequence again"; rules-notes §4.3: the cycle 7-8-9-J-Q-K-10-A (3 players
    9-J-Q-K-10-A), A next to the lowest rank, at either end."""
    hands, script = corner_deal(n)
    env = start(n, hands, dealer=n - 1, contract="domino")
    step(env, script[0])
    # Above the Jack goes a Queen, below it a Nine, of any suit.
    legal = names(env)
    assert all(
        x.endswith("@top")
        and x.startswith("Q")
        or x.endswith("@bottom")
        and x.startswith("9")
        for x in legal
    ), legal
    for name in script[1:]:
        step(env, name)
    st = env.unwrapped.game_state
    # top end is the lowest rank (after the ace), bottom end is the ace (after the
    # lowest)
    assert st.line_top[0] == 0
    assert st.line_bottom[0] == env.unwrapped.game.num_ranks - 1
    # Next: going up from the lowest rank; going down from the Ace, the Ten.
    up = "8" if n == 4 else "J"
    raw = env.unwrapped
    for a in raw.legal_actions():
        name = raw.action_name(a)
        if name.endswith("@top"):
            assert name.startswith(up)
        elif name.endswith("@bottom"):
            assert name.startswith("10")


@pytest.mark.parametrize("n", [3, 4])
def test_domino_corner_steps_are_enforced(n):
    """Seed: "Aces may 'turn the corner'": with the line's top end at the Ace only the
    lowest rank fits there, and a card of the wrong rank is refused."""
    hands, script = corner_deal(n)
    env = start(n, hands, dealer=n - 1, contract="domino")
    corner_at = script.index("AS@top") + 1
    for name in script[:corner_at]:
        step(env, name)
    tops = [x for x in names(env) if x.endswith("@top")]
    low = "7" if n == 4 else "9"
    assert tops and all(x.startswith(low) for x in tops)
    raw = env.unwrapped
    held = raw.game.deck.format_mask(raw.game_state.hands[to_play(env)]).split()
    wrong = next(c for c in held if not c.startswith(low))
    with pytest.raises(IllegalActionError, match="does not fit"):
        env.step(env.unwrapped.action_id(wrong + "@top"))


@pytest.mark.parametrize("n", [3, 4])
def test_domino_card_fitting_both_ends(n):
    """rules-notes §4.3: "Actions are (card, end), because one card can fit both ends":
    with the line 7…10 (3 players 9…10) both ends want an Ace."""
    if n == 4:
        fixed = [["JS", "9S"], ["QH", "8C"], ["KD", "7D"], ["10C", "AH"]]
        script = [
            "JS",
            "QH@top",
            "KD@top",
            "10C@top",
            "9S@bottom",
            "8C@bottom",
            "7D@bottom",
        ]
    else:
        fixed = [["JS", "10C"], ["QH", "9S"], ["KD", "AH"]]
        script = ["JS", "QH@top", "KD@top", "10C@top", "9S@bottom"]
    env = start(n, fill(n, fixed), dealer=n - 1, contract="domino")
    for name in script:
        step(env, name)
    assert to_play(env) == n - 1
    assert "AH@top" in names(env) and "AH@bottom" in names(env)


@pytest.mark.parametrize("n", [3, 4])
def test_domino_pass_and_compulsory_lay(n):
    """rules-notes §4.3: a player who cannot lay passes (no penalty); laying is
    compulsory when a card fits, so "pass" is then illegal."""
    # Seat 0 opens with JS; seat 1 holds no Queen and no Nine: nothing fits, he must
    # pass.
    if n == 4:
        fixed = hands_of("JS QS QH | AS KS 10S 8S 7S AH KH 10H | 9S | QD")
    else:
        fixed = hands_of("JS QS QH | AS KS 10S AH KH 10H AD KD | 9S")
    env = start(n, fill(n, fixed), dealer=n - 1, contract="domino")
    step(env, "JS")
    assert to_play(env) == 1
    assert names(env) == ["pass"]
    with pytest.raises(IllegalActionError, match="must pass"):
        env.step(env.unwrapped.action_id("AS@top"))
    rewards = step(env, "pass")
    assert rewards == [0.0] * n
    assert to_play(env) == 2
    assert "9S@bottom" in names(env)
    assert "pass" not in names(env)
    with pytest.raises(IllegalActionError, match="compulsory"):
        env.step(env.unwrapped.action_id("pass"))


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("layout", ["single_cyclic_line", "per_suit_rows"])
def test_domino_finishing_order_and_penalties(n, layout):
    """Seed: "Whoever is first to meld all his or her cards is not penalised. The
    remaining players continue to play; the second to go out gets 10 minus points, the
    third 20 and the fourth 30"; rules-notes §4.3: 3 players 0, −10, −20; the deal ends
    when only one player still holds cards, who takes the last place."""
    env = make(players=n, contract="domino", domino_layout=layout)
    raw = env.unwrapped
    rng = np.random.default_rng(11)
    for g in range(10):
        env.reset(seed=g)
        order: list[int] = []
        totals = [0.0] * n
        while not all(raw.terminations.values()):
            legal = raw.legal_actions()
            env.step(legal[rng.integers(len(legal))])
            for i, a in enumerate(raw.possible_agents):
                totals[i] += raw.rewards[a]
            for p in range(n):
                if raw.game_state.hands[p] == 0 and p not in order:
                    order.append(p)
        assert len(order) == n - 1  # the deal ended when one player still held cards
        last = next(p for p in range(n) if p not in order)
        assert raw.game_state.hands[last]
        expected = [0.0] * n
        for place, p in enumerate([*order, last]):
            expected[p] = -10.0 * place
        assert totals == expected
        assert sum(totals) == DEAL_TOTALS[n][7]
        assert raw.details()["out_order"] == (*order, last)


def test_domino_skips_players_who_went_out():
    """Seed: "The remaining players continue to play": a player who is out has no more
    turns."""
    env = make(players=3, contract="domino")
    raw = env.unwrapped
    env.reset(seed=4)
    while not all(raw.terminations.values()):
        p = to_play(env)
        assert raw.game_state.hands[p], "a player who went out was asked to play"
        env.step(raw.legal_actions()[0])


@pytest.mark.parametrize("n", [3, 4])
def test_domino_never_blocks(n):
    """rules-notes §4.3: "With one cyclic line and 4 copies of each rank, the layout
    cannot block while cards remain": fewer consecutive passes than players still in,
    every deal finishes."""
    env = make(players=n, contract="domino")
    raw = env.unwrapped
    rng = np.random.default_rng(2)
    for g in range(40):
        env.reset(seed=100 + g)
        passes = 0
        while not all(raw.terminations.values()):
            legal = raw.legal_actions()
            a = legal[rng.integers(len(legal))]
            passes = passes + 1 if a == raw.game.PASS else 0
            assert passes < n - len(raw.game_state.out_order)
            env.step(a)


def test_per_suit_rows_layout():
    """rules-notes §4.3, the per-suit option: "natural order A K O U 10 9 8 7, each
    Unter starting a row for its suit, the holder of the Heart Unter leading"."""
    hands = fill(4, [["QS", "JD"], ["JS", "10H"], ["JH", "QH"], ["9S", "JC"]])
    env = start(4, hands, dealer=3, contract="domino", domino_layout="per_suit_rows")
    assert to_play(env) == 2  # the holder of JH starts, not the dealer's left
    assert names(env) == ["JH"]
    step(env, "JH")
    legal = names(env)  # seat 3: the spade row is not opened, so 9S fits nowhere
    assert "JC" in legal and not any(x.startswith("9S") for x in legal)
    assert all(x.startswith("J") or x in ("QH@top", "10H@bottom") for x in legal)
    step(env, "JC")
    assert "JD" in names(env) and not any(x.startswith("QS") for x in names(env))
    step(env, "JD")
    legal = names(env)
    assert "JS" in legal  # another Jack opens its own row
    assert "10H@bottom" in legal and "10H@top" not in legal  # natural order: 10 below U


def test_per_suit_rows_corner_in_suit():
    """Seed "Aces may 'turn the corner'" kept in the per-suit option: a row reaching the
    Ace continues with the Seven of the same suit."""
    fixed = [["JH", "AH"], ["QH", "7H"], ["KH", "9D"], ["JD", "8D"]]
    env = start(
        4, fill(4, fixed), dealer=3, contract="domino", domino_layout="per_suit_rows"
    )
    assert to_play(env) == 0
    step(env, "JH")
    step(env, "QH@top")
    step(env, "KH@top")
    step(env, "JD")
    step(env, "AH@top")
    assert "7H@top" in names(env)
    assert "7H@bottom" not in names(env)  # the bottom end wants the Ten of hearts
    step(env, "7H@top")


def test_single_line_ignores_suit():
    """rules-notes §4.3 (de.wikipedia): "ohne Rücksicht a[uf die Farbe]" — the Queen of
    any suit fits above a Jack of spades, and the Ten does not touch the Jack."""
    env = start(
        4, fill(4, [["JS"], ["QH", "10D", "9C"], [], []]), dealer=3, contract="domino"
    )
    step(env, "JS")
    legal = names(env)
    assert "QH@top" in legal and "9C@bottom" in legal
    assert not any(x.startswith("10D") for x in legal)


# --- the partie -----------------------------------------------------------------------
@pytest.mark.parametrize("n", [3, 4])
def test_partie_order_and_rotation(n):
    """Seed: "A partie in Herzeln comprises a series of eight individual hands (Touren),
    each of which is a separate contract"; rules-notes §4.3: "the deal passes clockwise
    each deal, with the deal types always in order 1 to 8"; the contract is in the
    observation."""
    env = make(players=n)
    raw = env.unwrapped
    env.reset(seed=7, options={"dealer": 1})
    game = raw.game
    seen: list[tuple[str, int, int]] = []
    history_len = -1
    while not all(raw.terminations.values()):
        st = raw.game_state
        if st.deal_no != history_len:
            history_len = st.deal_no
            seen.append((raw.details()["contract"], st.dealer, to_play(env)))
            obs = raw.observe(env.agent_selection)["observation"]
            base = game.N + 3 * n * game.N + game.N
            assert obs[base : base + 8].tolist() == [
                1.0 if i == st.contract else 0.0 for i in range(8)
            ]
        env.step(raw.legal_actions()[0])
    assert [s[0] for s in seen] == list(CONTRACTS)
    assert [s[1] for s in seen] == [(1 + i) % n for i in range(8)]
    for _contract, dealer, first in seen:
        assert first == (dealer + 1) % n
    assert len(raw.game_state.history) == 8
    totals = [sum(h[1][p] for h in raw.game_state.history) for p in range(n)]
    assert game.returns(raw.game_state) == totals
    assert sum(totals) == sum(DEAL_TOTALS[n])


def _drive(game, state, forced, rng) -> None:
    """Apply chance outcomes until a player decides: forced ones first, then sampled."""
    while game.current_player(state) == CHANCE:
        outcome = forced.pop(0) if forced else None
        if outcome is None:
            outcome = game.sample_chance(state, rng)[0]
        game.apply(state, outcome)


def test_partie_forced_deals_and_scores_as_scored():
    """Reset options: "deals" fixes several deals in order (conventions.md), later
    dealers following the rotation; every deal's points count as they are scored."""
    deals = [{"dealer": 3, "hands": suit_deal(4)}, {"hands": suit_deal(4)}]
    game = Herzeln(players=4)
    forced = game.forced_chance({"deals": deals})
    assert len(forced) == 1 + 2 * 32 and forced[0] == 3
    state = game.new_state()
    rng = np.random.default_rng(0)
    _drive(game, state, forced, rng)
    while state.deal_no < 2:
        game.apply(state, game.legal_actions(state)[0])
        _drive(game, state, forced, rng)
        game.check_invariants(state)
    # No Hearts then Tricks on the same cards: seat 1 took the hearts; everyone 2
    # tricks.
    assert state.history == [(0, (0, -33, 0, 0)), (1, (20, 20, 20, 20))]
    assert game.returns(state) == [20, -13, 20, 20]
    assert state.dealer == 1  # dealer 3, then 0, now 1 for the third deal


def test_partie_forced_deals_through_env():
    """The same through ``env.reset(options={"deals": …})``: rewards as they are
    scored."""
    deals = [{"dealer": 3, "hands": suit_deal(4)}, {"hands": suit_deal(4)}]
    env = make(players=4)
    env.reset(seed=1, options={"deals": deals})
    raw = env.unwrapped
    totals = [0.0] * 4
    while raw.game_state.deal_no < 2:
        env.step(raw.legal_actions()[0])
        for i, a in enumerate(raw.possible_agents):
            totals[i] += raw.rewards[a]
        assert totals == raw.game.returns(raw.game_state)
    assert totals == [20, -13, 20, 20]


def test_rewards_as_each_trick_is_scored():
    """Issue: "rewards = each deal's points as they are scored (returns = totals so
    far)" — the hearts of a trick are charged when the trick is taken."""
    env = start(4, suit_deal(4), dealer=0, contract="no_hearts")  # seat 1 leads hearts
    raw = env.unwrapped
    step(env, "AH")
    for _ in range(3):
        rewards = step(env, names(env)[0])
    # AH, then the lowest ids: JH (seat 2), 8H (seat 3), KH (seat 0): -11 -2 -1 -4
    assert raw.game_state.last_trick == (
        1,
        tuple(raw.game.deck.cards(["AH", "JH", "8H", "KH"])),
        1,
    )
    assert rewards == [0, -18, 0, 0]
    assert raw.game.returns(raw.game_state) == rewards


def test_equal_totals_share_the_win():
    """rules-notes §4.3 [ENGINE CHOICE]: "The highest total wins, and equal totals share
    the win"."""
    env = start(4, suit_deal(4), dealer=3, contract="king_of_hearts")
    play_first_legal(env)
    info = env.unwrapped.details()
    assert info["scores"] == (0, -40, 0, 0)
    assert info["winners"] == (0, 2, 3)


def test_not_zero_sum_flag():
    """Issue: Herzeln is NOT zero-sum (penalty contracts sum to negative totals)."""
    assert Herzeln().zero_sum is False
    assert DEAL_TOTALS[4] == (-33, 80, -80, -80, -40, 40, -40, -60)
    assert DEAL_TOTALS[3] == (-31, 80, -80, -80, -40, 40, -40, -30)


# --- hidden information ---------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"players": 4},
        {"players": 3},
        {"players": 4, "contract": "domino", "domino_layout": "per_suit_rows"},
    ],
)
def test_observation_hides_other_hands(options):
    """The observation never reveals another player's hidden cards: swapping unplayed
    cards between two opponents leaves my observation unchanged."""
    game = make(**options).unwrapped.game
    checked = 0
    for state in random_decisions(game, np.random.default_rng(0), games=6):
        for me in range(game.num_players):
            a, b = [s for s in range(game.num_players) if s != me][:2]
            if state.hands[a] and state.hands[b]:
                other = swap_lowest_cards(state, a, b)
                assert np.array_equal(game.observe(state, me), game.observe(other, me))
                checked += 1
    assert checked > 100


def test_observation_shows_own_hand_and_card_counts():
    """Issue: observations hold the own hand and, for Domino, each player's card
    count."""
    env = start(4, suit_deal(4), dealer=3, contract="domino")
    raw = env.unwrapped
    obs = raw.observe("player_0")["observation"]
    hand = [raw.game.deck.card(c) for c in suit_deal(4)[0]]
    assert sorted(np.flatnonzero(obs[: raw.game.N]).tolist()) == sorted(hand)
    counts_at = raw.game.observation_size - 5 * 4 - 2
    assert obs[counts_at : counts_at + 4].tolist() == [1.0] * 4


# --- names, options and bad input -----------------------------------------------------
def test_action_names_roundtrip():
    """conventions.md: Domino actions are ``"JS"`` / ``"QH@top"``, ``"9C@bottom"`` /
    ``"pass"``."""
    game = Herzeln(players=4)
    for a in range(game.num_actions):
        assert game.action_id(game.action_name(a)) == a
    assert game.action_name(game.action_id("qh@TOP")) == "QH@top"
    assert game.action_name(game.PASS) == "pass"
    with pytest.raises(ValueError, match="unknown action"):
        game.action_id("QH@middle")
    with pytest.raises(ValueError, match="not in the 24-card pack"):
        Herzeln(players=3).action_id("8S")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"players": 5}, "players"),
        ({"players": True}, "players"),
        ({"episode": "match"}, "episode"),
        ({"episode": "deal"}, "no_hearts, tricks, no_tricks"),
        ({"contract": "hearts"}, "valid contracts: no_hearts, tricks"),
        ({"episode": "partie", "contract": "tricks"}, "only for episode='deal'"),
        ({"domino_layout": "rows"}, "domino_layout"),
        ({"early_end": "yes"}, "early_end"),
        ({"colour": 1}, "bad options"),
    ],
)
def test_bad_options(options, message):
    """Unknown or inconsistent options raise ValueError naming the problem."""
    with pytest.raises(ValueError, match=message):
        make(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"contract": "tricks", "domino_layout": "per_suit_rows"},
            "domino_layout='per_suit_rows' has no effect without the Domino deal",
        ),
        (
            {"contract": "domino", "early_end": True},
            "early_end=True has no effect without a penalty-card deal",
        ),
        (
            {"contract": "last_trick", "early_end": True},
            "early_end=True has no effect",
        ),
    ],
)
def test_inert_options_refused(options, message):
    """An option that cannot change the chosen deal is refused (one line); its default,
    written out, is not."""
    with pytest.raises(ValueError, match=message):
        make(**options)


@pytest.mark.parametrize(
    "options",
    [
        {"contract": "tricks", "domino_layout": "single_cyclic_line"},
        {"contract": "domino", "early_end": False},
        {"contract": "no_hearts", "early_end": True},
        {"domino_layout": "per_suit_rows", "early_end": True},  # a partie has both
    ],
)
def test_options_with_an_effect_or_default_accepted(options):
    game = make(**options).unwrapped.game
    for key in ("domino_layout", "early_end"):  # kept as given, not dropped
        if key in options:
            assert getattr(game, key) == options[key]
    make(**envs.game_options("herzeln_v0", options))  # every option written out


@pytest.mark.parametrize(
    "deal, message",
    [
        ({"hands": [["AS"] * 8] * 4}, "dealt twice"),
        ({"hands": suit_deal(4)[:3]}, "must have 4 hands"),
        ({"hands": [*suit_deal(4)[:3], suit_deal(4)[3][:7]]}, "must have 8 cards"),
        ({"hands": [[*suit_deal(4)[0][:7], "XS"], *suit_deal(4)[1:]]}, "unknown card"),
        ({"dealer": 4, "hands": suit_deal(4)}, "seat number"),
        ({"hands": suit_deal(4), "stock": []}, r"unknown deal key\(s\)"),
    ],
)
def test_bad_forced_deals(deal, message):
    """Malformed deals raise ValueError naming the problem (conventions.md forced
    deals)."""
    env = make(players=4)
    with pytest.raises(ValueError, match=message):
        env.reset(options={"deal": deal})


def test_bad_forced_deal_sequences():
    """A partie's later dealers follow the rotation; no more deals than the episode
    has."""
    env = make(players=4)
    with pytest.raises(ValueError, match="breaks the rotation"):
        env.reset(
            options={
                "deals": [
                    {"dealer": 0, "hands": suit_deal(4)},
                    {"dealer": 3, "hands": suit_deal(4)},
                ]
            }
        )
    one = make(players=4, contract="tricks")
    with pytest.raises(ValueError, match="the episode has 1"):
        one.reset(options={"deals": [{"hands": suit_deal(4)}] * 2})
    with pytest.raises(ValueError, match="not in the 24-card pack"):
        make(players=3).reset(options={"deal": {"hands": suit_deal(4)[:3]}})


def test_illegal_action_message_lists_legal_actions():
    """Illegal actions raise IllegalActionError naming the reason and the legal
    actions."""
    env = start(4, suit_deal(4), dealer=3, contract="tricks")
    with pytest.raises(IllegalActionError, match=r"does not hold that card; legal: AS"):
        env.step(env.unwrapped.action_id("AH"))
    with pytest.raises(IllegalActionError, match="legal: AS"):
        env.step(env.unwrapped.action_id("AS@top"))


def test_render_names():
    """Issue: German names in rendering only (4 players), canonical names in the API."""
    env4 = start(4, suit_deal(4), dealer=3, contract="no_queens", render_mode="ansi")
    text = env4.render()
    assert "Laub-Daus" in text and "Ober" in text
    assert env4.unwrapped.action_name(0) == "AS"
    env3 = start(3, suit_deal(3), dealer=2, contract="domino", render_mode="ansi")
    assert "A♠" in env3.render()
    assert "hidden" not in env3.unwrapped.game.render(
        env3.unwrapped.game_state, viewer=0
    )
    assert "8 cards" in env3.unwrapped.game.render(env3.unwrapped.game_state, viewer=0)


@pytest.mark.parametrize(
    "options",
    [
        {"players": 3},
        {"players": 3, "domino_layout": "per_suit_rows"},
        {"players": 4, "domino_layout": "per_suit_rows", "early_end": True},
    ],
)
def test_soak_other_variants(options):
    """Random play with invariants (cards conserved, points adding up to the per-deal
    totals) on the partie variants the generic tier does not cover."""
    result = soak("herzeln_v0", options, games=8, seed=3, zero_sum=False)
    assert result["games"] == 8
