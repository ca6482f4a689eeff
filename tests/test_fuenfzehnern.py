"""Scenario tests for ``fuenfzehnern_v0`` (rule book: *How to Play Fünfzehnern*).

The rule texts are the seed and the rules notes §3.

Each test forces an exact deal and checks one rule. Deals name the dealer; with dealer 3
(4 players) or 2 (3 players) eldest is player_0. Moves are card names in play order.
"""

from __future__ import annotations

import numpy as np
import pytest

from parlour import envs
from parlour.envs.core.engine import CHANCE, TERMINAL, IllegalActionError
from parlour.envs.fuenfzehnern import Fuenfzehnern, raw_env
from parlour.envs.fuenfzehnern.observation import layout

SUITS = "SHDC"


def hands(*rows: str) -> list[list[str]]:
    return [row.split() for row in rows]


def start(deal_hands: list[list[str]], dealer: int = 3, **options) -> raw_env:
    e = raw_env(**options)
    e.reset(seed=0, options={"deal": {"dealer": dealer, "hands": deal_hands}})
    return e


def play(e: raw_env, moves: str) -> None:
    for name in moves.split():
        e.step(e.action_id(name))


def legal(e: raw_env) -> set[str]:
    return {e.action_name(a) for a in e.legal_actions()}


def hand_of(e: raw_env, seat: int) -> set[str]:
    return set(e.game.deck.format_mask(e.game_state.hands[seat]).split())


# Deal A: a chain of captures S, H (own win), then D.
DEAL_A = hands(
    "7S JS 9H 10H AD KD 7C 8C",
    "AS 7H 8H QD JD 10D AC KC",
    "KS 9S 8S AH 9D 8D 7D QC",
    "QS 10S KH QH JH JC 10C 9C",
)
A_T1 = "7S AS 9S 10S"  # player_1's AS captures the lead in S
# player_1 (out of S, so free) leads 7H; player_2's AH captures in H
A_T2 = "7H AH JH 9H"
A_T3 = "KS QS JS 10D"  # player_2, out of H, falls back to S and wins his own lead
A_T4 = "8S 9C 7C JD"
A_T5 = "7D 10C AD QD"  # player_2 is out of S and H: free; player_0's AD captures in D

# Deal A': as A but player_2 holds QS instead of KS, so his fall-back suit has no
# unbeatable card (KS is with player_3).
DEAL_A2 = hands(
    "7S JS 9H 10H AD KD 7C 8C",
    "AS 7H 8H QD JD 10D AC KC",
    "QS 9S 8S AH 9D 8D 7D QC",
    "KS 10S KH QH JH JC 10C 9C",
)

# Deal B: player_1 captures the lead in H with AH, keeping KH (then unbeatable) and 9H.
DEAL_B = hands(
    "10H 7H 8S 7S 8D 7D 8C 7C",
    "AH KH 9H JS 10D 9D AC 9C",
    "QH 8H AS QS KD JD KC JC",
    "JH KS 10S 9S AD QD QC 10C",
)
# Deal B': player_1 keeps JH and 9H, both beatable (QH is with player_2).
DEAL_B2 = hands(
    "10H 7H 8S 7S 8D 7D 8C 7C",
    "AH JH 9H JS 10D 9D AC 9C",
    "QH 8H AS QS KD JD KC JC",
    "KH KS 10S 9S AD QD QC 10C",
)
B_T1 = "7H AH 8H"  # + player_3's only heart

# Deal C: player_0 holds KS and QS; the AS is with player_2.
DEAL_C = hands(
    "KS QS 7H 8H 7D 8D 7C 8C",
    "10S 9S 9H 10H 9D 10D 9C 10C",
    "AS 8S JH QH JD QD JC QC",
    "JS 7S AH KH AD KD AC KC",
)

# All spades to player_0, all hearts to player_1, …: player_0 leads and wins every
# trick.
ONE_SUIT_EACH = hands(
    "AS KS QS JS 10S 9S 8S 7S",
    "AH KH QH JH 10H 9H 8H 7H",
    "AD KD QD JD 10D 9D 8D 7D",
    "AC KC QC JC 10C 9C 8C 7C",
)
RANKS = "A K Q J 10 9 8 7".split()


def all_tricks(suits: str) -> str:
    return " ".join(r + s for r in RANKS for s in suits)


# --- ids, deal, eldest ----------------------------------------------------------------
@pytest.mark.parametrize(
    "action, name",
    [
        (0, "AS"),
        (2, "QS"),
        (3, "JS"),
        (7, "7S"),
        (8, "AH"),
        (17, "KD"),
        (31, "7C"),
        (32, "zwang:QS"),
        (33, "zwang:QH"),
        (34, "zwang:QD"),
        (35, "zwang:QC"),
    ],
)
def test_action_ids_are_stable(action: int, name: str) -> None:
    """Documented ids: 0..31 the German pack's cards (S H D C, A K Q J 10 9 8 7), 32 + s
    Zwang on suit s (conventions.md: ``"zwang:QS"``); the same ids with 3 players."""
    for players in (4, 3):
        game = Fuenfzehnern(players=players)
        assert game.num_actions == 36
        assert game.action_name(action) == name
        assert game.action_id(name) == action
    assert Fuenfzehnern().action_id("zwang:q♥") == 33


def test_forced_deal_lands_in_the_named_seats_and_eldest_leads() -> None:
    """Seed: "The player to the immediate left of the dealer leads the first card to the
    first trick" — eldest is dealer + 1; each hand is exactly the forced one."""
    for dealer in range(4):
        e = start(DEAL_A, dealer=dealer)
        assert e.agent_selection == f"player_{(dealer + 1) % 4}"
        for seat in range(4):
            assert hand_of(e, seat) == set(DEAL_A[seat])
    e = raw_env(players=3)
    e.reset(seed=4, options={"dealer": 1})  # the dealer alone; the cards are shuffled
    assert e.game_state.dealer == 1 and e.agent_selection == "player_2"
    e = raw_env()
    e.reset(seed=4, options={"deal": {"hands": DEAL_A}})  # the cards alone
    assert [hand_of(e, s) for s in range(4)] == [set(h) for h in DEAL_A]
    assert e.agent_selection == f"player_{(e.game_state.dealer + 1) % 4}"


# --- eldest's free leads --------------------------------------------------------------
@pytest.mark.parametrize("lead_rules", ["strict", "relaxed"])
def test_eldest_leads_freely_while_he_keeps_the_lead(lead_rules: str) -> None:
    """Seed: "On this first trick of the hand this player may lead using any card from
    his hand. And as long as this player retains the lead for each trick, that player
    may continue to lead to each trick using any card of choice remaining in his hand."
    """
    e = start(DEAL_C, lead_rules=lead_rules)
    assert legal(e) == set(DEAL_C[0]) | {"zwang:QS"}
    play(e, "KS 10S 8S JS")  # the KS beats 10S, 8S and JS: player_0 keeps the lead
    assert e.agent_selection == "player_0"
    # eldest's own wins never capture
    assert e.game.info(e.game_state)["capture_chain"] == ""
    assert legal(e) == set(DEAL_C[0]) - {"KS"}  # any card, the 7H as much as the QS


# --- the chain of capture suits -------------------------------------------------------
def test_capture_chain_over_several_changes_of_lead() -> None:
    """Seed: "a player must lead … the same suit as that which the player was able to
    capture the lead … must then play a card in the suit that was led previous to the
    current winning suit" (rules-notes §3: a stack of capture suits; a leader winning
    his own lead adds nothing)."""
    e = start(DEAL_A)
    chain = []
    for moves in (A_T1, A_T2, A_T3, A_T4, A_T5):
        play(e, moves)
        chain.append(e.game.info(e.game_state)["capture_chain"])
    assert chain == ["S", "SH", "SH", "SH", "SHD"]
    assert e.agent_selection == "player_0"  # the AD won trick 5


def test_observation_shows_the_chain_and_the_lead_obligation() -> None:
    """The observation exposes the capture chain (distinct suits, latest first) and the
    lead obligation it puts on the leader, so a learner can see why leads are masked."""
    e = start(DEAL_A)
    # player_2 captured in H but holds no H: he must lead S, and the KS
    play(e, A_T1 + " " + A_T2)
    L = layout(4)
    obs2 = e.observe("player_2")["observation"]
    chain = obs2[L["chain"]].reshape(4, 4)
    assert chain[0].tolist() == [0, 1, 0, 0] and chain[1].tolist() == [1, 0, 0, 0]
    assert chain[2:].sum() == 0
    assert obs2[L["must_lead"]].tolist() == [1, 0, 0, 0]
    assert (
        obs2[L["to_lead"]][0] == 1
        and obs2[L["duty"]][0] == 1
        and obs2[L["free_lead"]][0] == 0
    )
    ks = e.action_id("KS")
    assert (
        obs2[L["unbeatable"]][ks] == 1 and obs2[L["unbeatable"]][e.action_id("8S")] == 0
    )
    obs0 = e.observe("player_0")["observation"]
    assert (obs0[L["chain"]] == obs2[L["chain"]]).all()  # the chain is public
    # not his lead: no obligation shown
    assert obs0[L["must_lead"]].sum() == 0 and obs0[L["to_lead"]][0] == 0
    # Relative seats: the leader is two seats to player_0's left, the dealer three.
    assert obs0[L["leader"]].tolist() == [0, 0, 1, 0]
    assert obs0[L["dealer"]].tolist() == [0, 0, 0, 1]


# --- the unbeatable duty, held and not held; relaxed differences ----------------------
DUTY_CASES = [
    # (deal, options, legal leads of player_1 after trick 1)
    pytest.param(DEAL_B, {}, {"KH"}, id="held-strict"),
    pytest.param(
        DEAL_B,
        {"unbeatable_duty_on_first_suit": False},
        {"KH", "9H"},
        id="held-no-duty-on-first-suit",
    ),
    pytest.param(
        DEAL_B, {"lead_rules": "relaxed"}, {"KH", "9H", "AC"}, id="held-relaxed"
    ),
    pytest.param(DEAL_B2, {}, {"JH", "9H"}, id="not-held-strict"),
    pytest.param(
        DEAL_B2, {"lead_rules": "relaxed"}, {"JH", "9H", "AC"}, id="not-held-relaxed"
    ),
]


@pytest.mark.parametrize("deal, options, expected", DUTY_CASES)
def test_unbeatable_duty_on_the_capture_suit(deal, options, expected) -> None:
    """Seed: "In thus playing a card of the required suit, the player must also play an
    unbeatable card in this suit (if he has such a card). An unbeatable card would be
    having any of the highest unplayed card (or cards) in that suit." After AH falls, KH
    is unbeatable and 9H is not (QH and 10H are out). Relaxed: the capture suit, and "if
    the leader has unbeatable cards … he may opt to play those first" — the AC too."""
    e = start(deal, **options)
    play(e, B_T1 + (" JH" if deal is DEAL_B else " KH"))
    assert e.agent_selection == "player_1"
    assert legal(e) == expected


def test_leader_who_keeps_the_lead_stays_bound() -> None:
    """rules-notes §3: a leader who wins his own lead stays bound exactly as before (the
    relaxed text: "As long as the player retains the lead and has any cards left in the
    suit in which he … won the lead, the player must play cards of that suit")."""
    e = start(DEAL_B)
    play(e, B_T1 + " JH")
    play(e, "KH QH 10S 10H")  # player_1's unbeatable KH wins; QH and 10H fall
    assert e.agent_selection == "player_1"
    assert e.game.info(e.game_state)["capture_chain"] == "H"
    assert legal(e) == {"9H"}  # still hearts, though he could otherwise lead anything


FALLBACK_CASES = [
    # (deal, options, legal leads of player_2 after tricks 1-2 of deal A)
    pytest.param(DEAL_A, {}, {"KS"}, id="unbeatable-held"),
    pytest.param(
        DEAL_A,
        {"unbeatable_duty_on_first_suit": False},
        {"KS"},
        id="fall-back-suit-keeps-the-duty",
    ),
    pytest.param(DEAL_A2, {}, {"QS", "8S"}, id="unbeatable-not-held"),
    pytest.param(
        DEAL_A,
        {"lead_rules": "relaxed"},
        {"KS", "8S", "9D", "8D", "7D", "QC"},
        id="relaxed-any-card",
    ),
    pytest.param(
        DEAL_A2,
        {"lead_rules": "relaxed"},
        {"QS", "8S", "9D", "8D", "7D", "QC"},
        id="relaxed-any-card-2",
    ),
]


@pytest.mark.parametrize("deal, options, expected", FALLBACK_CASES)
def test_falling_back_through_the_chain(deal, options, expected) -> None:
    """Seed: "This second player to win the lead, if not having any cards in the suit
    led by the previous player, must then play a card in the suit that was led previous
    to the current winning suit", with the unbeatable duty. player_2 captured in H,
    holds no H, so he must lead S (chain S, H). Relaxed: "if he does not have such a
    card, he is not required to play a card of the suit previous to that … and may
    simply play any other card"."""
    e = start(deal, **options)
    play(e, A_T1 + " " + A_T2)
    assert e.agent_selection == "player_2"
    assert e.game.info(e.game_state)["capture_chain"] == "SH"
    assert legal(e) == expected


def test_falling_back_after_keeping_the_lead() -> None:
    """The fall-back goes on "back through the chain": player_0 captured in D (chain S,
    H, D), keeps the lead with the KD, and once out of D must lead H (his 10H) rather
    than the 8C."""
    e = start(DEAL_A)
    play(e, " ".join((A_T1, A_T2, A_T3, A_T4, A_T5)))
    # D, the latest capture suit; the KD is unbeatable (AD played)
    assert legal(e) == {"KD"}
    play(e, "KD 8H 8D JC")
    assert e.agent_selection == "player_0"
    assert legal(e) == {"10H"}
    relaxed = start(DEAL_A, lead_rules="relaxed")
    play(relaxed, " ".join((A_T1, A_T2, A_T3, A_T4, A_T5, "KD 8H 8D JC")))
    assert legal(relaxed) == {"10H", "8C"}


@pytest.mark.parametrize("lead_rules", ["strict", "relaxed"])
def test_free_lead_once_out_of_every_chain_suit(lead_rules: str) -> None:
    """Seed: "If a player has exhausted all the suits that the former players had won
    tricks in, they may then play a card of any suit still remaining in their hand."
    player_1 captured in S holding no more S; later player_2 has no S and no H left
    (chain S, H)."""
    e = start(DEAL_A, lead_rules=lead_rules)
    play(e, A_T1)
    assert legal(e) == set(DEAL_A[1]) - {"AS"}
    play(e, " ".join((A_T2, A_T3, A_T4)))
    assert e.agent_selection == "player_2"
    assert legal(e) == {"9D", "8D", "7D", "QC"}
    L = layout(4)
    assert e.observe("player_2")["observation"][L["free_lead"]][0] == 1


def test_wrong_lead_is_illegal_and_the_message_names_the_rule() -> None:
    """Bad input: a lead outside the obligation raises IllegalActionError listing the
    legal actions."""
    e = start(DEAL_A)
    play(e, A_T1 + " " + A_T2)
    with pytest.raises(IllegalActionError, match=r"capture chain S H.*legal: KS"):
        e.step(e.action_id("8S"))
    with pytest.raises(IllegalActionError, match="does not hold"):
        e.step(e.action_id("AS"))


def test_followers_must_follow_suit_but_need_not_head() -> None:
    """Seed: "a player must play a card of the suit originally led to that trick (but
    need not play his highest …). If a player has no cards in the suit originally led …
    any suit"."""
    e = start(DEAL_A)
    play(e, "7S")
    assert legal(e) == {"AS"}
    play(e, "AS")
    assert legal(e) == {"KS", "9S", "8S"}  # any spade, not only the winning one
    play(e, "9S 10S 7H")
    assert e.agent_selection == "player_2"
    assert legal(e) == {"AH"}
    play(e, "AH JH")
    assert legal(e) == {"9H", "10H"}
    e2 = start(DEAL_A)
    play(e2, A_T1 + " " + A_T2 + " KS QS JS")
    assert legal(e2) == hand_of(e2, 1)  # void in spades: anything
    e3 = start(DEAL_A)
    play(e3, "7S AS")
    with pytest.raises(IllegalActionError, match="follow suit.*legal: KS, 9S, 8S"):
        e3.step(e3.action_id("AH"))  # player_2 holds spades


# --- Zwang ----------------------------------------------------------------------------
def test_zwang_is_offered_with_king_and_ober_and_forces_the_ace() -> None:
    """Seed: "If a player, having both the King and Queen of the same suit, and is
    legally able to lead that suit, may lead the Queen and announce 'Zwang' … The player
    who has the Ace of that same suit must play it when it is their turn to play to that
    same trick." """
    e = start(DEAL_C)
    assert "zwang:QS" in legal(e)
    # no King-Ober pair in the other suits
    assert not {"zwang:QH", "zwang:QD", "zwang:QC"} & legal(e)
    play(e, "zwang:QS")
    assert legal(e) == {"10S", "9S"}  # player_1 has no Ace: ordinary following
    play(e, "9S")
    assert legal(e) == {"AS"}  # player_2 must play the Ace, not the 8S
    with pytest.raises(IllegalActionError, match="Zwang forces the Ace"):
        e.step(e.action_id("8S"))
    L = layout(4)
    obs = e.observe("player_3")["observation"]
    assert obs[L["zwang_now"]][0] == 1
    assert obs[L["zwang_suits"]].tolist() == [1, 0, 0, 0]
    play(e, "AS 7S")
    # "This allows the player to later attempt to win the King": the KS is unbeatable.
    obs0 = e.observe("player_0")["observation"]
    assert obs0[L["unbeatable"]][e.action_id("KS")] == 1
    assert obs0[L["zwang_now"]][0] == 0 and obs0[L["zwang_suits"]][0] == 1


def test_plain_ober_lead_does_not_force_the_ace() -> None:
    """Without the announcement the Ace holder follows suit freely."""
    e = start(DEAL_C)
    play(e, "QS 9S")
    assert legal(e) == {"AS", "8S"}


def test_zwang_not_offered_when_the_ober_is_not_a_legal_lead() -> None:
    """Zwang needs a player who "is legally able to lead that suit": player_0 captured
    in H and must lead his 8H, so neither the QS nor Zwang is allowed; nor without the
    King."""
    deal = hands(
        "KS QS AH 8H 7D 8D 7C 8C",
        "10S 9S 9H 10H 9D 10D 9C 10C",
        "AS 8S JH QH JD QD JC QC",
        "JS 7S 7H KH AD KD AC KC",
    )
    for rules in ("strict", "relaxed"):
        e = start(deal, dealer=0, lead_rules=rules)  # eldest is player_1
        play(e, "9H JH 7H AH")
        assert e.agent_selection == "player_0"
        assert legal(e) == {"8H"}
        with pytest.raises(IllegalActionError, match="Zwang needs"):
            e.step(e.action_id("zwang:QS"))
    e = start(DEAL_C, dealer=2)  # eldest player_3 holds KH but not QH: no Zwang
    assert not any(name.startswith("zwang") for name in legal(e))


def test_zwang_without_effect_when_the_leader_holds_the_ace() -> None:
    """rules-notes §3: if the Ace is in the leader's hand (or already played) the
    announcement has no effect: every follower's choices are those of a plain Ober
    lead."""
    deal = hands(
        "AS KS QS 8H 7D 8D 7C 8C",
        "10S 9S 9H 10H 9D 10D 9C 10C",
        "7H 8S JH QH JD QD JC QC",
        "JS 7S AH KH AD KD AC KC",
    )
    plain, zwang = start(deal), start(deal)
    play(plain, "QS")
    play(zwang, "zwang:QS")
    for _ in range(3):
        assert legal(plain) == legal(zwang)
        move = sorted(legal(plain))[0]
        play(plain, move)
        play(zwang, move)


# --- scoring --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "players, suits, expected",
    [(4, "SHDC", [45, -15, -15, -15]), (3, "SHD", [30, -15, -15])],
)
def test_point_counting_one_player_takes_everything(players, suits, expected) -> None:
    """Card points "Ace 5, King 4, Queen 3, Jack 2, 10 1, 7 8 9 0" make 60 (45 with a
    suit removed); game points are card points − 15: player_0 takes every card."""
    e = start(ONE_SUIT_EACH[:players], dealer=players - 1, players=players)
    play(e, all_tricks(suits))
    assert e.terminations["player_0"]
    info = e.game.info(e.game_state)
    assert info["card_points"] == (15 * players,) + (0,) * (players - 1)
    assert e.game.returns(e.game_state) == expected
    assert [e._cumulative_rewards[a] for a in e.possible_agents] == expected


@pytest.mark.parametrize("players", [4, 3])
def test_point_totals_and_baseline_over_random_deals(players: int) -> None:
    """Seed: "For each card point a player managed to capture over 15 … earns one game
    point. For each card point under 15 … loses one": every random deal's card points
    sum to 60 (4 players) or 45 (3) and each seat's game points are its card points −
    15, summing to zero."""
    rng = np.random.default_rng(7)
    for seed in range(30):
        e = raw_env(players=players)
        e.reset(seed=seed)
        while not e.terminations[e.agent_selection]:
            moves = e.legal_actions()
            e.step(moves[int(rng.integers(len(moves)))])
        pts = e.game.info(e.game_state)["card_points"]
        assert sum(pts) == 15 * players
        assert e.game.returns(e.game_state) == [p - 15 for p in pts]


TYING_DEAL = hands(
    "AS KS QS JS AH KH QH 7D",
    "AD KD QD JD AC KC QC JC",
    "10S 9S 8S 7S 10H 9H 8H 7H",
    "10D 9D 8D JH 10C 9C 8C 7C",
)
TYING_MOVES = (
    "AS JC 7S 7C  7D AD 7H 8D  KD 8H 9D KS  QD 9H 10D QS  JD 10H JH JS  "
    "AC 8S 8C AH  KC 9S 9C KH  QC 10S 10C QH"
)


@pytest.mark.parametrize(
    "tying, expected", [(False, [-8, 38, -15, -15]), (True, [15, 15, -15, -15])]
)
def test_tying_players_scoring(tying: bool, expected: list[int]) -> None:
    """Seed: "in the situation in which just two players managed to win all eight tricks
    … each of these two players was awarded 15 Game Points, and the two players who won
    no tricks … each lose 15". player_0 wins one trick (7 card points), player_1 the
    other seven (53)."""
    e = start(TYING_DEAL, tying_scoring=tying)
    play(e, TYING_MOVES)
    assert e.game.info(e.game_state)["tricks"] == (1, 7, 0, 0)
    assert e.game.returns(e.game_state) == expected


def test_tying_rule_ignores_a_single_winner() -> None:
    """rules-notes §3: one player taking all 8 tricks scores normally: +45, −15 × 3."""
    e = start(ONE_SUIT_EACH, tying_scoring=True)
    play(e, all_tricks("SHDC"))
    assert e.game.returns(e.game_state) == [45, -15, -15, -15]


# --- three players --------------------------------------------------------------------
def test_three_player_deck_removes_one_suit() -> None:
    """Seed: "one entire suit should be removed from play, resulting in a 24 card deck"
    (default the last suit, C; configurable); the action ids stay those of the 32-card
    pack."""
    game = Fuenfzehnern(players=3)
    assert game.in_play.bit_count() == 24 and game.total_points == 45
    with pytest.raises(ValueError, match="not in the 24-card pack"):
        start(
            [["AS", "KS", "QS", "JS", "10S", "9S", "8S", "AC"], *ONE_SUIT_EACH[1:3]],
            dealer=2,
            players=3,
        )
    e = start(ONE_SUIT_EACH[1:4], dealer=2, players=3, removed_suit="S")
    assert legal(e) == set(ONE_SUIT_EACH[1]) | {"zwang:QH"}
    L = layout(3)
    removed = e.observe("player_0")["observation"][L["removed_suit"]]
    assert removed.tolist() == [1, 0, 0, 0]
    e = raw_env(players=3, removed_suit="H")
    for seed in range(20):
        e.reset(seed=seed)
        assert all(h.bit_count() == 8 for h in e.game_state.hands)
        while not e.terminations[e.agent_selection]:
            moves = e.legal_actions()
            # no heart, no zwang:QH
            assert all(not 8 <= a < 16 and a != 33 for a in moves)
            e.step(moves[seed % len(moves)])


# --- sessions -------------------------------------------------------------------------
def test_match_accumulates_game_points_and_rotates_the_deal() -> None:
    """Seed: "the deal of each hand proceeds in a clockwise direction" and "After
    playing some pre-determined set number of hands, the player with the highest grand
    total in Game Points" wins: per-deal game points arrive as each deal ends; num_hands
    defaults to the number of players (everyone deals once)."""
    e = raw_env(episode="match")
    e.reset(seed=3, options={"deal": {"dealer": 3, "hands": ONE_SUIT_EACH}})
    assert e.game.num_hands == 4
    play(e, all_tricks("SHDC")[:-3])  # all but player_3's last card
    assert all(e.rewards[a] == 0 for a in e.possible_agents)
    play(e, "7C")
    assert [e.rewards[a] for a in e.possible_agents] == [45, -15, -15, -15]
    assert not any(e.terminations.values())
    assert (
        e.game_state.dealer == 0 and e.agent_selection == "player_1"
    )  # eldest of deal 2
    L = layout(4)
    obs = e.observe("player_1")["observation"]
    assert obs[L["deals_done"]][0] == 0.25
    assert obs[L["scores"]].tolist() == pytest.approx(
        [45 / 240, 45 / 240, 45 / 240, 105 / 240]  # seats from player_1: 1, 2, 3, 0
    )
    totals = {a: float(e.rewards[a]) for a in e.possible_agents}
    rng = np.random.default_rng(0)
    while not all(e.terminations.values()):
        moves = e.legal_actions()
        e.step(moves[int(rng.integers(len(moves)))])
        for a in e.possible_agents:
            totals[a] += e.rewards[a]
    assert e.game_state.deal_no == 4 and e.game_state.dealer == 2  # dealers 3, 0, 1, 2
    assert [totals[a] for a in e.possible_agents] == e.game.returns(e.game_state)
    assert e.game.returns(e.game_state) == [
        sum(d[p] for d in e.game_state.deal_scores) for p in range(4)
    ]
    assert sum(e.game.returns(e.game_state)) == 0


def test_match_forced_deals_follow_the_rotation() -> None:
    """Two forced deals of a match (engine level): dealer 3 then dealer 0, whose eldest
    (player_1) holds every spade the second time; the session totals add up."""
    game = Fuenfzehnern(episode="match", num_hands=2)
    second = [ONE_SUIT_EACH[3], *ONE_SUIT_EACH[:3]]  # player_1 holds the spades
    forced = game.forced_chance(
        {"deals": [{"dealer": 3, "hands": ONE_SUIT_EACH}, {"hands": second}]}
    )
    assert len(forced) == 1 + 2 * 32
    state = game.new_state()
    moves = (all_tricks("SHDC") + " " + all_tricks("SHDC")).split()
    while game.current_player(state) != TERMINAL:
        if game.current_player(state) == CHANCE:
            game.apply(state, forced.pop(0))
        else:
            game.apply(state, game.action_id(moves.pop(0)))
    assert not forced and not moves
    assert state.deal_scores == [[45, -15, -15, -15], [-15, 45, -15, -15]]
    assert game.returns(state) == [30, 30, -30, -30]


def test_match_deals_must_follow_the_rotation() -> None:
    """Bad input: a later forced deal naming the wrong dealer, or too many deals."""
    e = raw_env(episode="match", num_hands=2)
    with pytest.raises(ValueError, match="rotation"):
        deal = {"dealer": 0, "hands": DEAL_A}
        e.reset(options={"deals": [deal, deal]})
    with pytest.raises(ValueError, match="episode has 2"):
        e.reset(options={"deals": [{"hands": DEAL_A}] * 3})
    with pytest.raises(ValueError, match="episode has 1"):
        raw_env().reset(options={"deals": [{"hands": DEAL_A}] * 2})


# --- hidden information ---------------------------------------------------------------
def test_observation_hides_other_hands() -> None:
    """Observations never reveal another player's hidden cards: swapping unplayed cards
    between player_2 and player_3 changes nothing player_0 or player_1 observes (also
    after a trick, and the infos and details() record)."""
    other = [h[:] for h in DEAL_A]
    other[2][other[2].index("8D")], other[3][other[3].index("JC")] = "JC", "8D"
    a, b = start(DEAL_A), start(other)
    for step in ["", *A_T1.split()]:
        if step:
            play(a, step)
            play(b, step)
        for agent in ("player_0", "player_1"):
            oa, ob = a.observe(agent), b.observe(agent)
            assert np.array_equal(oa["observation"], ob["observation"])
            assert np.array_equal(oa["action_mask"], ob["action_mask"])
        assert a.infos["player_0"] == b.infos["player_0"]
        assert a.details() == b.details()
    assert not np.array_equal(
        a.observe("player_2")["observation"], b.observe("player_2")["observation"]
    )


def test_render_uses_german_names_and_hides_hands() -> None:
    """German names in rendering only ("Ober/Unter, Laub/Herz/Schellen/Eichel"); API
    names stay canonical."""
    e = start(DEAL_C)
    text = e.game.render(e.game_state, viewer=0)
    assert "Laub-König" in text and "Laub-Ober" in text
    assert "Eichel-Daus" not in text and "8 hidden cards" in text
    full = e.game.render(e.game_state)
    assert "Eichel-Daus" in full and "Schellen-Unter" in full
    assert e.action_name(e.legal_actions()[0]) in DEAL_C[0]


# --- options and bad input ------------------------------------------------------------
@pytest.mark.parametrize(
    "options, match",
    [
        ({"players": 5}, "players must be one of"),
        ({"players": True}, "players"),
        ({"removed_suit": "C"}, "only for players=3"),
        ({"players": 3, "removed_suit": "X"}, "unknown suit"),
        ({"lead_rules": "loose"}, "lead_rules must be one of"),
        ({"lead_rules": "relaxed", "unbeatable_duty_on_first_suit": True}, "strict"),
        ({"unbeatable_duty_on_first_suit": 1}, "True or False"),
        ({"tying_scoring": "yes"}, "True or False"),
        ({"players": 3, "tying_scoring": True}, "needs players=4"),
        ({"episode": "rubber"}, "episode must be one of"),
        ({"num_hands": 3}, "needs episode='match'"),
        ({"episode": "match", "num_hands": 0}, "positive integer"),
        ({"illegal_action": "ignore"}, "illegal_action"),
    ],
)
def test_bad_options_raise(options: dict, match: str) -> None:
    """Unknown or inconsistent options raise ValueError naming the problem."""
    with pytest.raises(ValueError, match=match):
        raw_env(**options)


@pytest.mark.parametrize(
    "deal, match",
    [
        ({"dealer": 3, "hands": DEAL_A[:3]}, "must have 4 hands"),
        ({"dealer": 3, "hands": [DEAL_A[0][:7], *DEAL_A[1:]]}, "must have 8 cards"),
        (
            {"dealer": 3, "hands": [["AS", *DEAL_A[0][1:]], *DEAL_A[1:]]},
            "dealt twice: AS",
        ),
        ({"dealer": 3, "hands": [["XX", *DEAL_A[0][1:]], *DEAL_A[1:]]}, "unknown card"),
        ({"dealer": 4, "hands": DEAL_A}, "seat number"),
        ({"dealer": 3, "hands": DEAL_A, "stock": []}, r"unknown deal key\(s\)"),
    ],
)
def test_malformed_deals_raise(deal: dict, match: str) -> None:
    """Malformed forced deals (counts, duplicates, unknown names, bad dealer) raise
    ValueError."""
    with pytest.raises(ValueError, match=match):
        raw_env().reset(options={"deal": deal})


def test_bad_action_names_raise() -> None:
    game = Fuenfzehnern()
    with pytest.raises(ValueError, match="Ober"):
        game.action_id("zwang:KS")
    with pytest.raises(ValueError, match="unknown card"):
        game.action_id("zwang:ZZ")
    with pytest.raises(ValueError, match="out of range"):
        game.action_name(36)


# --- wrapped env, registry and invariants ---------------------------------------------
VARIANT_OPTIONS = envs.VARIANTS["fuenfzehnern_v0"]


@pytest.mark.parametrize("options", VARIANT_OPTIONS, ids=str)
def test_random_play_keeps_the_invariants(options: dict) -> None:
    """Random legal play through the wrapped env: masks equal the engine's legal
    actions, observations stay in [0, 1], invariants hold after every step, and the game
    is zero-sum."""
    e = envs.make("fuenfzehnern_v0", **options)
    game = e.unwrapped.game
    rng = np.random.default_rng(1)
    for seed in range(25):
        e.reset(seed=seed)
        totals = dict.fromkeys(e.possible_agents, 0.0)
        steps = 0
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            totals[agent] += reward
            assert obs["observation"].min() >= 0 and obs["observation"].max() <= 1
            if term or trunc:
                e.step(None)
                continue
            moves = np.flatnonzero(obs["action_mask"]).tolist()
            assert moves == game.legal_actions(e.unwrapped.game_state)
            e.step(moves[int(rng.integers(len(moves)))])
            steps += 1
            game.check_invariants(e.unwrapped.game_state)
        assert steps == game.max_game_length
        assert sum(totals.values()) == 0
        assert list(totals.values()) == game.returns(e.unwrapped.game_state)


def test_engine_chance_nodes_deal_eight_each() -> None:
    """The engine alone: the dealer and 32 (24) single cards are chance outcomes."""
    for players in (4, 3):
        game = Fuenfzehnern(players=players)
        state = game.new_state()
        assert game.current_player(state) == CHANCE
        assert len(game.chance_outcomes(state)) == players
        game.apply(state, 0)
        for k in range(8 * players):
            outcomes = game.chance_outcomes(state)
            assert len(outcomes) == 8 * players - k
            game.apply(state, outcomes[0][0])
        assert game.current_player(state) == 1  # eldest, left of dealer 0
        assert [h.bit_count() for h in state.hands] == [8] * players
        assert game.current_player(state) != TERMINAL
