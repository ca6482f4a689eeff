"""``parlour serve`` over HTTP: a uvicorn server on a free loopback port (started and
stopped by these tests), driven with httpx as a browser drives it.

- Play: every legal move is a ``data-action`` button and nothing else is; games end
  with a result; every game is stored and survives a restart.
- Hidden information: for every variant of every game, each raw response of seat 0's
  game is searched for every card seat 0 cannot know at that moment (the others'
  hidden cards, the stock, buried and discarded cards) in every spelling the pages
  use, and for the env seed.
- Bad input of every kind gets its 4xx page and the server keeps serving.
- Watch, replay (browser games, league games, arena records) and the leaderboard.
"""

from __future__ import annotations

import html
import json
import random
import re
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from parlour import envs
from parlour.cli import main as cli_main
from parlour.envs.core.cards import cards_in
from parlour.training import pretrained
from parlour.web.app import LOOPBACK_HOSTS, create_app, running
from parlour.web.games import move_label, public_move
from parlour.web.service import Parlour

ACTION = re.compile(r'data-action="([^"]+)"')
PLY = re.compile(r'name="ply" value="(\d+)"')
RESULT = 'data-testid="result"'


@contextmanager
def serve(parlour: Parlour) -> Iterator[httpx.Client]:
    """A uvicorn server of ``parlour`` on a free loopback port, and a client of it."""
    with running(create_app(parlour)) as base:
        # a bot that loads a model on a busy machine can take a while
        with httpx.Client(base_url=base, timeout=120) as client:
            yield client


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Parlour, httpx.Client]]:
    parlour = Parlour(tmp_path_factory.mktemp("web") / "league.sqlite")
    with serve(parlour) as client:
        yield parlour, client


def game_id(response: httpx.Response) -> str:
    return response.url.path.rsplit("/", 1)[1]


def move(client: httpx.Client, page: httpx.Response, action: str) -> httpx.Response:
    ply = PLY.search(page.text)
    assert ply is not None, "a page with moves carries its ply"
    return client.post(
        f"/game/{game_id(page)}/move",
        data={"action": action, "ply": ply.group(1)},
        follow_redirects=True,
    )


def play_out(
    client: httpx.Client, page: httpx.Response, rng: random.Random, check=None
) -> httpx.Response:
    """Click random buttons until the result shows; ``check(page)`` sees each page."""
    for _ in range(5000):
        assert page.status_code == 200, page.text[-500:]
        if check is not None:
            check(page)
        if RESULT in page.text:
            return page
        page = move(client, page, rng.choice(ACTION.findall(page.text)))
    raise AssertionError("the game did not end")


# --- play -----------------------------------------------------------------------------
def test_healthz(served) -> None:
    _, client = served
    r = client.get("/healthz")
    assert (r.status_code, r.text) == (200, "ok")


def test_every_legal_move_is_a_button_and_nothing_else(served) -> None:
    parlour, client = served
    page = client.get(
        "/play/forty_fives_v0?opponent=heuristic&o=episode=deal", follow_redirects=True
    )
    rng = random.Random(3)

    def check(page: httpx.Response) -> None:
        live = parlour.game(game_id(page))
        table = live.table
        shown = ACTION.findall(page.text)
        if table.over:
            assert shown == []
            return
        assert table.to_act == 0, "the bots move until it is the human's turn"
        assert sorted(shown) == sorted(table.legal_names())
        assert page.text.count("data-action=") == len(shown)
        assert '<p class="turn" data-testid="turn">Your turn.' in page.text

    end = play_out(client, page, rng, check)
    live = parlour.game(game_id(end))
    returns = live.table.returns()
    result = end.text.split(RESULT)[1].split("</section>")[0]
    for side in live.table.sides():
        assert f"{sum(returns[s] for s in side) / len(side):g}" in result


def test_a_game_survives_a_restart(tmp_path) -> None:
    db = tmp_path / "league.sqlite"
    rng = random.Random(5)
    with serve(Parlour(db)) as client:
        page = client.get(
            "/play/german_whist_v0?opponent=heuristic&seat=1",
            follow_redirects=True,
        )
        for _ in range(3):
            page = move(client, page, rng.choice(ACTION.findall(page.text)))
        before = page.text
    # a new server on the same file: the game is rebuilt from its stored moves
    with serve(Parlour(db)) as client:
        page = client.get(page.url.path)
        assert page.status_code == 200
        view = re.compile(r'<pre data-testid="view">.*?</pre>', re.S)
        assert view.findall(page.text) == view.findall(before)
        assert ACTION.findall(page.text) == ACTION.findall(before)
        end = play_out(client, page, rng)
        assert "player_1 (you)" in end.text
    row = (
        sqlite3.connect(db)
        .execute("SELECT kind, human, scores FROM web_games")
        .fetchone()
    )
    assert row[:2] == ("play", 1) and row[2] is not None
    # the league's own tables are there too: one file for both
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_move_labels_and_what_the_others_see() -> None:
    """Buttons draw a card play as the card; a robber's buried card and a face-down
    discard are told to the other seats only as the kind of move."""
    game = envs.make("forty_fives_v0", raw=True).game
    assert move_label(game, "10H") == {
        "card": {"rank": "10", "suit": "♥", "red": True},
        "text": "",
    }
    assert move_label(game, "rob:7C")["text"] == "rob 7♣"
    assert move_label(game, "trump:D")["text"] == "trump ♦"
    assert move_label(game, "bid:20")["text"] == "bid 20"
    herzeln = envs.make("herzeln_v0", raw=True).game
    assert move_label(herzeln, "QH@top")["text"] == "at the top"
    assert [public_move(n) for n in ("rob:7C", "discard:AS", "norob", "zwang:QS")] == [
        "rob",
        "discard",
        "norob",
        "zwang:QS",
    ]


# --- hidden information ---------------------------------------------------------------
def hidden_from(game: Any, state: Any, seat: int) -> set[int]:
    """The cards ``seat`` cannot know at ``state``: each game's hidden places."""
    n = game.num_players
    hidden = 0
    if game.name == "german_whist_v0":
        opp = 1 - seat
        if state.stage == 1:
            hidden |= state.hands[opp] & ~state.seen[opp]
        # the stock below the face-up card
        for c in state.stock[state.stock_pos + 1 :]:
            hidden |= 1 << c
    elif game.name == "forty_fives_v0":
        for p in range(n):
            if p != seat:
                hidden |= state.hands[p] | state.put_away[p]
        if state.robbed_by >= 0 and state.turned >= 0:
            hidden &= ~(1 << state.turned)  # the robbed turned card is public
        if state.buried >= 0 and state.robbed_by != seat:
            hidden |= 1 << state.buried
        hidden |= state.kitty
        for c in state.stock[state.stock_pos :]:
            if c != state.turned:
                hidden |= 1 << c
    elif game.name in ("fuenfzehnern_v0", "herzeln_v0"):
        for p in range(n):
            if p != seat:
                hidden |= state.hands[p]
    return set(cards_in(hidden))


def spellings(game: Any, card: int) -> list[re.Pattern]:
    """Every way a page could write a card: its name, with a suit symbol, drawn."""
    name = game.deck.format(card)
    pretty = game.deck.pretty(card)
    rank, symbol = (pretty[:-1], pretty[-1]) if pretty != name else (name, "")
    return [
        re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"),
        re.compile(rf"(?<![A-Za-z0-9]){re.escape(pretty)}"),
        re.compile(
            rf'<span class="rank">{re.escape(rank)}</span>'
            rf'<span class="suit">{re.escape(symbol)}</span>'
        ),
    ]


def test_hidden_information_stays_on_the_server(
    served, env_name: str, options: dict
) -> None:
    """Every response of seat 0's game, before the result shows, is free of every
    card seat 0 cannot know and of the env seed (from which the deal follows)."""
    parlour, client = served
    params = [("opponent", "heuristic")] + [
        ("o", f"{k}={v}") for k, v in options.items()
    ]
    rng = random.Random(11)
    checked: list[int] = []

    def check(page: httpx.Response) -> None:
        live = parlour.game(game_id(page))
        game, state = live.table.game, live.table.state
        if RESULT in page.text:
            return
        assert str(live.seed) not in page.text
        for card in hidden_from(game, state, 0):
            for pattern in spellings(game, card):
                found = pattern.search(page.text)
                assert found is None, (
                    f"{game.deck.format(card)} is hidden from player_0 but the page "
                    f"shows {found.group(0)!r}"
                )
        checked.append(len(hidden_from(game, state, 0)))

    # A dice game can end before seat 0's first turn (another seat loses its last
    # match first): then the next game is played.
    for _ in range(20):
        page = client.get(f"/play/{env_name}", params=params, follow_redirects=True)
        play_out(client, page, rng, check)
        if checked:
            break
    # the check had hidden cards to look for (none in the dice game, which has none)
    assert checked and (env_name == "fuenfzehn_tot_v0" or max(checked) > 0)


def test_a_game_in_progress_cannot_be_replayed(served) -> None:
    _, client = served
    page = client.get("/play/german_whist_v0?opponent=random", follow_redirects=True)
    r = client.get(f"/replay/{game_id(page)}")
    assert r.status_code == 409 and "not over yet" in r.text


# --- bad input ------------------------------------------------------------------------
BAD = [
    ("/play/no_such_game", 404, "no game 'no_such_game'"),
    ("/play/german_whist_v0?o=colour=red", 400, "unknown option 'colour'"),
    ("/play/german_whist_v0?o=variant=klondike", 400, "klondike"),
    ("/play/german_whist_v0?o=novalue", 400, "KEY=VALUE"),
    ("/play/german_whist_v0?seat=first", 400, "seat must be an integer"),
    ("/play/german_whist_v0?seat=5", 400, "seat must be 0..1"),
    ("/play/german_whist_v0?opponent=ckpt:/etc/passwd", 400, "never by a path"),
    ("/play/german_whist_v0?opponent=ckpt:../../runs/x", 400, "never by a path"),
    ("/play/german_whist_v0?opponent=../etc", 400, "never by a path"),
    ("/play/german_whist_v0?opponent=model:../../etc", 400, "no model"),
    ("/play/german_whist_v0?opponent=%00%01", 400, "not on this server's list"),
    ("/play/german_whist_v0?opponent=heuristic:+telepathy", 400, "telepathy"),
    ("/play/german_whist_v0?opponent=pimc:100000", 400, "up to 64"),
    ("/play/german_whist_v0?opponent=endgame:pimc:1000", 400, "up to 64"),
    ("/play/german_whist_v0?opponent=ckpt:weights", 400, "never by a path"),
    ("/play/german_whist_v0?opponent=endgame:ckpt:w", 400, "never by a path"),
    ("/play/german_whist_v0?opponent=threshold:3", 400, "not on this server's list"),
    ("/play/herzeln_v0?opponent=endgame:heuristic", 400, "no exact solver"),
    ("/play/german_whist_v0?opponent=a&opponent=b&opponent=c", 400, "one opponent"),
    ("/play/forty_fives_v0?o=players=7", 400, "players"),
    ("/game/nope", 404, "no game 'nope'"),
    ("/replay/nope", 404, "no stored game"),
    ("/replay/L999999", 404, "no stored game"),
    ("/leaderboard/german_whist_v0", 404, "no german_whist_v0 games"),
    ("/leaderboard/nope", 404, "no game 'nope'"),
    ("/watch/german_whist_v0?agent=random", 400, "at least two agents"),
    ("/watch/german_whist_v0?agent=random&agent=ckpt:/x", 400, "never by a path"),
    ("/play?env=", 400, "needs a env"),
    ("/nowhere", 404, "no such page"),
    (f"/play/german_whist_v0?o={'x' * 300}", 400, "longer than"),
]


@pytest.mark.parametrize(("url", "status", "message"), BAD)
def test_bad_input_gets_a_clear_4xx_page(served, url, status, message) -> None:
    _, client = served
    r = client.get(url)
    assert r.status_code == status, r.text[-800:]
    assert message in html.unescape(r.text)
    assert client.get("/healthz").text == "ok"


def test_bad_moves_are_refused(served) -> None:
    parlour, client = served
    page = client.get("/play/german_whist_v0?opponent=random", follow_redirects=True)
    gid = game_id(page)
    ply = PLY.search(page.text).group(1)
    legal = ACTION.findall(page.text)
    illegal = next(n for n in parlour.game(gid).table.game.deck.names if n not in legal)
    cases = [
        ({"action": illegal, "ply": ply}, 400, "not a legal move"),
        ({"action": "rob:7C", "ply": ply}, 400, "not a legal move"),
        ({"action": legal[0], "ply": str(int(ply) + 1)}, 409, "reload"),
        ({"action": legal[0]}, 400, "no ply"),
        ({"ply": ply}, 400, "names no action"),
    ]
    for data, status, message in cases:
        r = client.post(f"/game/{gid}/move", data=data)
        assert (r.status_code, message in html.unescape(r.text)) == (status, True)
    assert len(parlour.game(gid).table.moves) == int(ply)  # nothing was played
    assert ACTION.findall(client.get(f"/game/{gid}").text) == legal  # unchanged
    assert client.get(f"/game/{gid}/move").status_code == 405
    play_out(client, page, random.Random(1))
    r = client.post(f"/game/{gid}/move", data={"action": legal[0], "ply": "999"})
    assert r.status_code == 409 and "over" in r.text
    assert RESULT in client.get(f"/game/{gid}").text


def test_a_loopback_server_answers_only_to_loopback_names(tmp_path) -> None:
    """What ``parlour serve`` does on 127.0.0.1: another Host header (a DNS name
    pointed at 127.0.0.1 by another site) gets a 400."""
    app = create_app(Parlour(tmp_path / "league.sqlite"), LOOPBACK_HOSTS)
    with running(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        assert client.get("/healthz").text == "ok"
        assert client.get("/healthz", headers={"Host": "localhost:80"}).text == "ok"
        r = client.get("/healthz", headers={"Host": "rebound.example"})
        assert r.status_code == 400


# --- agents ---------------------------------------------------------------------------
def test_models_come_from_the_allow_list(tmp_path) -> None:
    """A checkpoint under --models plays as model:NAME; its path never appears in a
    request."""
    shipped = pretrained.models_of("german_whist_v0")[0]
    zoo = tmp_path / "zoo"
    shutil.copytree(shipped, zoo / "gw")
    parlour = Parlour(tmp_path / "league.sqlite", model_dirs=[zoo])
    assert list(parlour.allow.models) == ["zoo/gw"]
    with serve(parlour) as client:
        assert "model:zoo/gw" in client.get("/").text
        page = client.get(
            "/play/german_whist_v0?opponent=model:zoo/gw", follow_redirects=True
        )
        assert page.status_code == 200 and ACTION.findall(page.text)
        end = play_out(client, page, random.Random(2))
        assert "model:zoo/gw" in end.text and str(zoo) not in end.text
        r = client.get(f"/play/german_whist_v0?opponent=ckpt:{zoo / 'gw'}")
        assert r.status_code == 400


# --- watch, replay, leaderboard ------------------------------------------------------
def test_watch_then_replay_every_view(served) -> None:
    _, client = served
    r = client.get(
        "/watch/herzeln_v0?agent=heuristic&agent=random", follow_redirects=True
    )
    assert r.status_code == 200 and 'data-autoplay="1"' in r.text
    assert "move 0 of" in r.text
    total = int(re.search(r"move 0 of (\d+)", r.text).group(1))
    path = r.url.path
    middle = client.get(f"{path}?move={total // 2}&view=2")
    assert "You are player_2" in middle.text
    end = client.get(f"{path}?move={total}&view=open")
    assert RESULT in end.text
    for bad, status in (
        (f"{path}?move={total + 1}", 400),
        (f"{path}?move=-1", 400),
        (f"{path}?view=4", 400),
        (f"{path}?view=../x", 400),
    ):
        assert client.get(bad).status_code == status


def test_league_games_replay_and_the_leaderboard(tmp_path) -> None:
    db = tmp_path / "league.sqlite"
    assert (
        cli_main(
            [
                "league",
                "german_whist_v0",
                "--agents",
                "random",
                "heuristic",
                "--games",
                "2",
                "--db",
                str(db),
                "--quiet",
            ]
        )
        == 0
    )
    stored = sqlite3.connect(db).execute("SELECT id, returns FROM games").fetchall()
    parlour = Parlour(db)
    with serve(parlour) as client:
        assert "/leaderboard/german_whist_v0" in client.get("/").text
        for row_id, returns in stored:
            r = client.get(f"/replay/L{row_id}?move=0")
            assert r.status_code == 200
            total = int(re.search(r"move 0 of (\d+)", r.text).group(1))
            end = client.get(f"/replay/L{row_id}?move={total}")
            scores = [f"{x:g}" for x in json.loads(returns)]
            assert all(s in end.text.split(RESULT)[1] for s in scores)
        board = client.get("/leaderboard/german_whist_v0")
        assert board.status_code == 200
        assert "data:image/svg+xml;base64," in board.text
        assert board.text.count("<tr>") == 3  # the head and the two agents
        # a league row the agents no longer play to the same end is refused
        conn = sqlite3.connect(db)
        conn.execute(
            "UPDATE games SET returns='[5.0, 5.0]' WHERE id=?", (stored[0][0],)
        )
        conn.execute("DELETE FROM web_games WHERE id=?", (f"L{stored[0][0]}",))
        conn.commit()
        r = client.get(f"/replay/L{stored[0][0]}")
        assert r.status_code == 409 and "agents changed" in r.text


def test_arena_records_are_imported_for_replay(tmp_path) -> None:
    records = tmp_path / "games.jsonl"
    assert (
        cli_main(
            [
                "arena",
                "fuenfzehnern_v0",
                "--agents",
                "text:scripted",
                "heuristic",
                "--games",
                "2",
                "--record",
                str(records),
                "--quiet",
            ]
        )
        == 0
    )
    parlour = Parlour(tmp_path / "league.sqlite", records=[records])
    assert parlour.imported == 2
    # importing the same file again keeps the games' ids
    assert Parlour(tmp_path / "league.sqlite", records=[records]).imported == 2
    rows = [r for r in parlour.store.recent() if r["kind"] == "record"]
    assert len(rows) == 2
    with serve(parlour) as client:
        for row, line in zip(
            sorted(rows, key=lambda r: r["seed"]),
            sorted(
                (json.loads(x) for x in records.read_text().splitlines()),
                key=lambda r: r["seed"],
            ),
            strict=True,
        ):
            total = len(row["moves"])
            end = client.get(f"/replay/{row['id']}?move={total}&view=1")
            assert end.status_code == 200 and RESULT in end.text
            assert all(f"{x:g}" in end.text for x in line["scores"])


def test_serve_refuses_bad_arguments(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert (
        cli_main(["serve", "--db", str(tmp_path / "l.sqlite"), "--records", str(bad)])
        == 2
    )
    assert "not a JSON line" in capsys.readouterr().err
    missing = tmp_path / "none"
    assert (
        cli_main(
            ["serve", "--db", str(tmp_path / "l.sqlite"), "--models", str(missing)]
        )
        == 2
    )
    assert "not a directory" in capsys.readouterr().err
    notdb = tmp_path / "x.sqlite"
    notdb.write_text("hello")
    assert cli_main(["serve", "--db", str(notdb)]) == 2
    assert "not a SQLite database" in capsys.readouterr().err


def test_load_fifty_concurrent_games() -> None:
    """The load test of benchmarks/web_load.py, bounded: 50 games at once, loopback."""
    import importlib.util

    path = Path(__file__).parent.parent / "benchmarks" / "web_load.py"
    spec = importlib.util.spec_from_file_location("web_load", path)
    web_load = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = web_load  # its dataclasses look their module up
    spec.loader.exec_module(web_load)
    result = web_load.run_load(games=50, clients=50)
    assert result.errors == []
    assert result.finished == 50
    print(result.summary())
