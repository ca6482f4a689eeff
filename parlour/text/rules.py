"""Rules summaries of every game and variant, for the text prompts.

Each game's record names its summary (``text_rules``) and the phrases the summary must
hold (``key_rules``, which the text tests check); `summary` finds them from the engine.

Written from ``docs/games/<game>.md`` (which is not installed with the package), in
plain English for a player who has never seen the game. Each summary is built from the
game's options as the engine holds them, so a variant's prompt states that variant's
rules (Honeymoon Whist's jokers, the auction's bidding, Fünfzehnern's relaxed lead
rules, a single Herzeln contract, a switched-off Fünfzehn – tot rule). Card and move
names in the summaries are the canonical ones that the legal-move list uses
(``docs/conventions.md``).
"""

from __future__ import annotations

from typing import Any

from .. import envs

CARD_NAMES = (
    "Cards are named rank then suit: ranks A K Q J 10 9 8 7 6 5 4 3 2, suits "
    "S (spades) H (hearts) D (diamonds) C (clubs); QS is the queen of spades, 10H the "
    "ten of hearts."
)


def german_whist(game: Any) -> str:
    """German Whist, or Honeymoon Whist (``variant="honeymoon"``)."""
    if not game.honeymoon:
        return "\n".join(
            [
                "GERMAN WHIST (2 players, 52 cards, no jokers). " + CARD_NAMES,
                "- Each player gets 13 cards; the other 26 are the stock, its top card "
                "face up. The suit of that first face-up card is trumps for the whole "
                "deal. Ace high, 2 low; any trump beats any card of another suit.",
                "- The non-dealer leads the first trick; the winner of a trick leads "
                "the next. Follow suit if you can; otherwise play any card. You never "
                "have to beat the card led or to trump.",
                "- Stage 1 (13 tricks, while the stock lasts): the winner of each "
                "trick takes the face-up card (the prize), the loser takes the next "
                "stock card face down, then the next card is turned up. Stage-1 "
                "tricks score nothing; they decide which cards you hold for stage 2.",
                "- A face-up prize stays in its winner's Seen row, visible to both "
                "players, until he plays it. Cards drawn face down are seen only by "
                "their taker.",
                "- Stage 2: the stock is empty; play out the 13 cards, still following "
                "suit. Both hands are then known (open). Whoever takes 7 of the 13 "
                "stage-2 tricks wins, and the game ends at once with the 7th.",
            ]
        )
    match = (
        "- A match: deals alternate, and the first player to "
        f"{game.match_target} match points wins the match."
        if game.episode == "match"
        else "- One deal is played; your result is your match points for it (plus) or "
        "the opponent's (minus)."
    )
    return "\n".join(
        [
            "HONEYMOON WHIST (German Whist with two jokers; 2 players, 54 cards). "
            + CARD_NAMES
            + " The jokers are JKH (high joker) and JKL (low joker).",
            "- Each player gets 13 cards; the other 28 are the stock, its top card "
            "face up. Its suit is trumps for the whole deal (a joker turned first "
            "makes spades trumps). The jokers are the highest trumps: JKH beats JKL, "
            "which beats the ace of trumps. Ace high, 2 low.",
            "- The non-dealer leads the first trick; the winner of a trick leads the "
            "next.",
            "- Stage 1 (14 tricks, while the stock lasts): you may play ANY card, you "
            "need not follow suit. The winner of each trick takes the face-up card "
            "(the prize), the loser the next stock card face down, then the next card "
            "is turned up. A face-up prize stays in its winner's Seen row, visible to "
            "both players, until he plays it.",
            "- Stage 2 (13 tricks): follow suit (the jokers count as trumps for "
            "following). Both hands are then known (open).",
            "- Every trick counts, all 27 are played: the player who takes 14 or more "
            "of the 27 tricks scores 1 match point for each trick over 13.",
            match,
        ]
    )


def forty_fives(game: Any) -> str:
    """Forty-Fives, Twenty-Five, Auction Forty-Fives (120) and 110."""
    n = game.num_players
    title = {
        "forty_fives": "FORTY-FIVES",
        "twenty_five": "TWENTY-FIVE (Forty-Fives without the bonus)",
        "auction": "AUCTION FORTY-FIVES (to 120)",
        "one_ten": "ONE HUNDRED AND TEN (Auction Forty-Fives to 110)",
    }[game.variant]
    if game.num_teams < n:
        sides = ", ".join(
            "{" + ", ".join(f"player_{s}" for s in team) + "}" for team in game.teams()
        )
        seating = f"two sides of partners: {sides}; partners share their score"
    else:
        seating = "each for himself"
    lines = [
        f"{title} ({n} players, {seating}; 52 cards). " + CARD_NAMES,
        "- 5 cards each. The A of hearts (AH) is ALWAYS a trump, never a heart.",
        "- Trumps, highest first: the 5 of trumps, the J of trumps, AH, then the A "
        "(not when hearts are trumps), K, Q of trumps, then in black trumps (S, C) "
        "2 3 4 6 7 8 9 10, in red trumps (H, D) 10 9 8 7 6 4 3 2. Plain suits: red "
        "K Q J 10 9 … 2 A (ace lowest); black K Q J A 2 3 … 10 (low numbers beat high "
        "ones).",
    ]
    if game.auction:
        lines += [
            "- Auction: bids are 15, 20, 25, 30 (moves bid:15 … bid:30), starting on "
            "the dealer's left. Pass or bid higher than the high bid; a pass is final. "
            "The dealer may 'hold' (take the contract at the current high bid). If all "
            "others pass, the dealer must bid. The high bidder names trumps "
            "(trump:S, trump:H, trump:D, trump:C) and takes the 3-card kitty.",
            "- Discarding: each player in turn discards face down (discard:X, one card "
            "at a time, then 'done') and is refilled to 5 from the stock; the bidder "
            "must discard down to 5.",
            "- The bidder leads the first trick."
            if game.bidder_leads
            else "- The player on the bidder's left leads the first trick.",
        ]
    else:
        lines += [
            "- The stock's top card is turned: its suit is trumps. Robbing: the holder "
            "of the ace of trumps (the dealer, if the turned card is an ace) may take "
            "the turned card and bury a card of his hand face down (move rob:X buries "
            "X), or decline (norob), before he plays his first card.",
            "- The player on the dealer's left leads the first trick.",
        ]
    void = (
        "if you cannot follow, you must trump if you can, else play any card"
        if game.void_must_trump
        else "if you cannot follow, play any card"
    )
    lines += [
        f"- Plain suit led: follow suit or trump (trumping is always allowed); {void}.",
        "- Trump led: play a trump if you have one, except that the 5 and J of trumps "
        "and the AH may be kept back (reneged) unless a higher one of those three was "
        "led; if they are your only trumps you may play any card.",
        "- The highest trump wins the trick, else the highest card of the suit led; "
        "the winner leads next.",
    ]
    if game.twenty_five:
        lines.append(
            f"- Scoring: 5 points per trick; the first side to {game.target} wins at "
            "once, even in the middle of a deal."
        )
    else:
        lines.append(
            "- Scoring: 5 points per trick, plus 5 for the trick holding the highest "
            "trump played in the deal."
        )
        if game.auction:
            lines.append(
                "- If the bidder's side takes at least its bid it scores what it took, "
                "otherwise the bid is subtracted. The others score what they took."
                + (
                    " A side that is not bidding cannot rise above "
                    f"{game.target - 5} in a deal."
                    if game.one_ten
                    else ""
                )
            )
        lines.append(f"- The first side to {game.target} points wins the game.")
    if game.episode == "deal":
        lines.append(
            "- One deal is played; your result is your side's score change minus the "
            "average change of all sides."
        )
    return "\n".join(lines)


def fuenfzehnern(game: Any) -> str:
    """Fünfzehnern, strict or relaxed lead rules, 3 or 4 players."""
    n = game.num_players
    pack = (
        "32 cards"
        if game.removed_suit < 0
        else f"24 cards, suit {'SHDC'[game.removed_suit]} removed"
    )
    lines = [
        f"FÜNFZEHNERN ({n} players, each for himself; {pack}; no trumps). "
        "Cards are named rank then suit, ranks A K Q(Ober) J(Unter) 10 9 8 7, suits "
        "S H D C; QS is the queen (Ober) of spades.",
        "- 8 cards each. The player on the dealer's left leads first. Follow the suit "
        "led if you can (any card of it), otherwise play anything. The highest card of "
        "the suit led wins; the winner leads next.",
        "- Card points in the tricks you take: A 5, K 4, Q 3, J 2, 10 1, 9 8 7 0. Your "
        "game points for a deal are your card points minus 15.",
        "- The capture chain: when a trick is won by someone other than its leader, "
        "the suit led is added to the chain (the suit the lead was captured in). While "
        "the chain is empty the leader leads freely.",
    ]
    if game.strict:
        duty = (
            "If you hold unbeatable cards of that suit (no higher unplayed card of it "
            "is outside your hand), you must lead one of them."
            if game.duty_on_first
            else "The unbeatable-card duty applies only to the older suits you fall "
            "back to, not to the latest capture suit."
        )
        lines.append(
            "- Strict lead rules: walk the chain from the latest capture suit back; "
            "the first of its suits you hold is the suit you must lead. "
            + duty
            + " If you hold none of the chain's suits, lead anything."
        )
    else:
        lines.append(
            "- Relaxed lead rules: if you hold the latest capture suit, lead a card of "
            "it or an unbeatable card of any suit; otherwise lead anything."
        )
    lines.append(
        "- Zwang: a leader holding the K and Q of a suit may lead the Q with Zwang "
        "(move zwang:QS etc.); whoever holds that suit's ace must then play it to the "
        "trick."
    )
    if game.tying_scoring:
        lines.append(
            "- Tying scoring: if exactly two players won at least one trick each, they "
            "score +15 and the others -15."
        )
    if game.episode == "match":
        lines.append(
            f"- A session of {game.num_hands} deals; game points add up, the highest "
            "total wins."
        )
    return "\n".join(lines)


#: Herzeln contract names (``rules.CONTRACTS`` order) and what each scores
HERZELN_CONTRACTS = (
    (
        "No Hearts (Herz)",
        "each heart taken costs A -11, 10 -10, K -4, Q -3, J -2, 9 8 7 -1",
    ),
    ("Tricks (Jeder Stich)", "each trick taken is worth +10"),
    ("No Tricks (Kein Stich)", "each trick taken costs -10"),
    ("No Queens (Ober)", "each queen (Ober) taken costs -20"),
    ("King of Hearts (Herzkönig)", "taking the KH costs -40"),
    ("Last Trick (Letzter)", "only the eighth trick counts: +40"),
    ("No Last Trick (Kein Letzter)", "taking the eighth trick costs -40"),
    ("Domino (Unteranlegen)", "no tricks; see the Domino rules"),
)


def herzeln(game: Any) -> str:
    """Herzeln: the partie of eight contracts, or one contract; Domino layouts."""
    n = game.num_players
    if game.german:
        pack = "32 cards, ranked A 10 K Q J 9 8 7 in each suit (the ten beats the king)"
    else:
        pack = "24 cards, ranked A 10 K Q J 9 in each suit (the ten beats the king)"
    lines = [
        f"HERZELN ({n} players, each for himself; {pack}). Cards are named rank then "
        "suit, suits S H D C; QS is the queen (Ober) of spades.",
    ]
    if len(game.contracts) > 1:
        lines.append(
            "- A partie of eight deals, each a different contract, in this order: "
            + "; ".join(f"{t}: {s}" for t, s in HERZELN_CONTRACTS)
            + ". Points add up over the partie; the highest total wins."
        )
    else:
        title, scoring = HERZELN_CONTRACTS[game.contracts[0]]
        lines.append(f"- One deal of the contract {title}: {scoring}.")
    if any(k != 7 for k in game.contracts):
        lines.append(
            "- Trick contracts: 8 cards each; the player on the dealer's left leads; "
            "no trumps; follow suit if you can, else play anything; the highest card "
            "of the suit led wins and leads next. All 8 tricks are played."
        )
    if 7 in game.contracts:
        if game.per_suit:
            lines.append(
                "- Domino (a row per suit): each Jack opens the row of its suit; the "
                "holder of the JH opens. A row is built in the order A K Q J 10 9"
                + (" 8 7" if game.german else "")
                + ", upward at its top end and downward at its bottom end; the ace "
                "may also go below the lowest card."
            )
        else:
            lines.append(
                "- Domino (one line for all suits): the player on the dealer's left "
                "starts; while the layout is empty only a Jack may be laid. The line "
                "is built from the Jack in the game's ranking "
                + ("7-8-9-J-Q-K-10-A" if game.german else "9-J-Q-K-10-A")
                + ", of any suit, and round again (the ace turns the corner): the "
                "next rank up goes on the top end, the next rank down on the bottom "
                "end."
            )
        lines.append(
            "- Domino moves: a Jack that opens a line is named by the card (JS); "
            "laying on an end is X@top or X@bottom; 'pass' only when nothing fits "
            "(laying is compulsory). Going out first scores 0, second -10, third -20, "
            "fourth -30; the deal ends when one player still holds cards."
        )
    return "\n".join(lines)


def fuenfzehn_tot(game: Any) -> str:
    """Fünfzehn – tot, with the engine's options."""
    n = game.num_players
    lines = [
        f"FÜNFZEHN – TOT (dice; {n} players, {game.total_matches} matches in the "
        "pool).",
        "- On your turn you roll one die repeatedly and add the faces ('roll'), and "
        "you may 'stand' to keep your total. Over 15 you are dead ('tot'). You "
        "cannot stand before your first roll.",
    ]
    if game.rule1:
        lines.append(
            "- Rule 1: a total of 9 must stand; a total of 10 must roll again."
        )
    if game.rule2:
        lines.append(
            "- Rule 2: whoever rolls a third time must roll a fourth (unless the total "
            "is 9, rule 1 comes first)."
        )
    lines += [
        "- Ties: a total set earlier in the round beats an equal total rolled later.",
        "- First half: everybody plays each round; the lowest total takes a match from "
        "the pool (a penalty), and a player who goes over 15 takes one at once and "
        "ends the round. The loser starts the next round. It ends when the pool is "
        "empty.",
        "- Second half: only players holding matches play; the highest total puts a "
        "match back, and reaching exactly 15 puts one back at once. The last player "
        "still holding matches loses the game.",
    ]
    return "\n".join(lines)


def summary(game: Any) -> str:
    """The rules summary of the variant an engine plays (its record's ``text_rules``
    hook); ValueError for an env without one."""
    return record_hook(game, "text_rules", "text rules summary")(game)


def record_hook(game: Any, hook: str, what: str) -> Any:
    """A hook of the engine's game record (`parlour.envs.GameRecord`), loaded;
    ValueError naming the games that have it when the engine's game has none."""
    if game.name in envs.names() and getattr(envs.record(game.name), hook):
        return envs.record(game.name).load(hook)
    having = [r.name for r in envs.records() if getattr(r, hook)]
    raise ValueError(
        f"no {what} for {game.name!r} (the {hook} hook of its game record); games "
        f"with one: {', '.join(having)}"
    )


# --- key rules: what each summary must say (the record's ``key_rules``) --------------
# The text tests check every registered variant's summary against these phrases, so a
# summary cannot lose a rule its variant plays by without a test noticing.
def german_whist_key_rules(game: Any) -> dict[str, bool]:
    """German Whist: the Seen row, the stage-2 target; Honeymoon: jokers, free play."""
    if game.honeymoon:
        return dict.fromkeys(["JKH", "ANY card", "14 or more", "Seen row"], True)
    return dict.fromkeys(["Seen row", "7 of the 13", "face-up", "trumps"], True)


def forty_fives_key_rules(game: Any) -> dict[str, bool]:
    """Robbing or the auction, and each variant's target."""
    words = {
        "forty_fives": ["5 of trumps", "AH", "rob:X", "norob", "45"],
        "twenty_five": ["rob:X", "at once", "25"],
        "auction": ["bid:15", "hold", "trump:S", "discard:X", "120"],
        "one_ten": ["bid:15", "cannot rise above", "kitty"],
    }[game.variant]
    return dict.fromkeys(words, True)


def fuenfzehnern_key_rules(game: Any) -> dict[str, bool]:
    """The lead rules of the variant, Zwang and the score."""
    if game.strict:
        words = ["capture chain", "Strict", "zwang:QS", "minus 15"]
    else:
        words = ["Relaxed", "latest capture suit", "Zwang"]
    return dict.fromkeys(words, True)


#: a one-deal Herzeln contract other than Domino (``rules.CONTRACTS`` order): what its
#: summary must say
_HERZELN_CONTRACT_WORDS = (
    ["No Hearts", "A -11"],
    ["Tricks", "+10"],
    ["No Tricks", "costs -10"],
    ["No Queens", "-20"],
    ["KH costs -40"],
    ["Last Trick", "+40"],
    ["No Last Trick", "costs -40"],
)


def herzeln_key_rules(game: Any) -> dict[str, bool]:
    """The partie's eight contracts, or the one contract; the Domino layout."""
    from ..envs.herzeln.rules import DOMINO

    if len(game.contracts) > 1:
        words = ["eight deals", "No Hearts", "Domino", "KH", "ten beats"]
    elif game.per_suit:
        words = ["row per suit", "JH", "X@bottom", "pass"]
    elif game.contracts[0] == DOMINO:
        words = ["Jack", "X@top", "pass", "turns the corner"]
    else:
        words = ["One deal", "follow suit", *_HERZELN_CONTRACT_WORDS[game.contracts[0]]]
    return dict.fromkeys(words, True)


def fuenfzehn_tot_key_rules(game: Any) -> dict[str, bool]:
    """Going over 15 and standing; rules 1 and 2 only when they are played."""
    return {"over 15": True, "stand": True, "Rule 1": game.rule1, "Rule 2": game.rule2}
