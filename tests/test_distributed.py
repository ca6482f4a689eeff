"""The Ray executor of the arena, the tips harness and the league
(`parlour.training.distributed`): the same results as the local run for the same seed,
bad input refused in one line before anything runs or is written, and nothing but plain
data (specs, seeds, weights as numpy arrays) handed to the workers.

The default-suite tests share one local Ray of this module's own
(`ray.init(num_cpus=2)`); the slow ones run the command line: Ctrl-C over Ray, and a
two-node cluster started here with `ray start` (and stopped here, only it)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import as_from_a_terminal

from parlour import league
from parlour.cli import main
from parlour.training import arena, distributed
from parlour.training import checkpoint as ckpt_io
from parlour.training.tips import run_tips
from parlour.training.tips.runner import Block, play_block
from parlour.training.tips.seat_order import _seat_block, game_seat_order

# one Ray per test run: with pytest-xdist these tests share one worker (as test_rllib's)
pytestmark = pytest.mark.xdist_group("ray")

ENV = "german_whist_v0"


def random_checkpoint(path: Path, seed: int = 0) -> Path:
    """A German Whist checkpoint with random weights: a policy that plays its own
    moves (not the first legal one), in the project's checkpoint format."""
    import torch

    from parlour import envs

    game = envs.make(ENV, raw=True).game
    gen = torch.Generator().manual_seed(seed)
    sizes = [game.observation_size, 16]
    policy = {
        "mlp_extractor.policy_net.0.weight": torch.randn(16, sizes[0], generator=gen),
        "mlp_extractor.policy_net.0.bias": torch.randn(16, generator=gen),
        "action_net.weight": torch.randn(game.num_actions, 16, generator=gen),
        "action_net.bias": torch.randn(game.num_actions, generator=gen),
    }
    manifest = {
        "env": ENV,
        "env_options": {},
        "game_options": envs.game_options(ENV, {}),
        "fingerprint": envs.fingerprint(ENV),
        "observation_size": game.observation_size,
        "num_actions": game.num_actions,
        "net_arch": [16],
        "activation": "tanh",
        "step": 0,
        "config": {},
        "snapshots": [],
    }
    return ckpt_io.save(path, {"policy": policy}, manifest)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# --- refused before anything runs -----------------------------------------------------
def test_address_without_the_ray_executor_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    for argv in (
        ["arena", ENV, "--agents", "random", "random", "--json", str(out / "a.json")],
        ["tips", "german_whist", "--out", str(out)],
        ["league", ENV, "--agents", "random", "heuristic", "--db", str(out / "l.db")],
    ):
        assert main([*argv, "--address", "127.0.0.1:6379"]) == 2
        err = one_line(capsys.readouterr().err)
        assert "--address is the Ray cluster's: use it with --executor ray" in err
    assert not out.exists()


def test_ray_not_installed_names_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    out = tmp_path / "out"
    for argv in (
        ["arena", ENV, "--agents", "random", "random", "--json", str(out / "a.json")],
        ["tips", "german_whist", "--out", str(out)],
    ):
        assert main([*argv, "--executor", "ray"]) == 2
        err = one_line(capsys.readouterr().err)
        assert "needs Ray: pip install 'parlour[rllib]'" in err
    assert not out.exists()


class _NotRay(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.recv(64)
        self.request.sendall(b"HTTP/1.0 400 Bad request\r\n\r\n")


def test_unreachable_or_wrong_address_is_one_line_and_quick(tmp_path, capsys):
    """Nothing listening, a server that is not a Ray head (Ray itself would retry it
    for minutes) and a malformed address: refused in seconds, before any game, with
    no output file and no progress bar."""
    server = socketserver.TCPServer(("127.0.0.1", 0), _NotRay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cases = {
        f"127.0.0.1:{free_port()}": "no Ray cluster answers at",
        f"127.0.0.1:{server.server_address[1]}": "answers, but not as a Ray head",
        "headnode": "bad --address 'headnode': write HOST:PORT",
    }
    json_out, tips_out = tmp_path / "a.json", tmp_path / "tips"
    arena_argv = ["arena", ENV, "--agents", "heuristic", "random"]
    try:
        for address, message in cases.items():
            for argv in (
                [*arena_argv, "--json", str(json_out)],
                ["tips", "german_whist", "--out", str(tips_out)],
            ):
                start = time.perf_counter()
                assert main([*argv, "--executor", "ray", "--address", address]) == 2
                assert time.perf_counter() - start < distributed.CONNECT_TIMEOUT + 5
                err = one_line(capsys.readouterr().err)
                assert message in err, err
                assert not json_out.exists() and not tips_out.exists()
    finally:
        server.shutdown()
        server.server_close()


def test_options_that_need_this_process_are_refused_with_ray(tmp_path, capsys):
    record = tmp_path / "games.jsonl"
    argv = ["arena", ENV, "--agents", "text:scripted", "random", "--executor", "ray"]
    assert main([*argv, "--record", str(record)]) == 2
    assert "--record writes each game from this process" in one_line(
        capsys.readouterr().err
    )
    assert not record.exists()
    argv = ["tips", "german_whist", "--executor", "ray", "--workers", "2"]
    assert main([*argv, "--out", str(tmp_path / "t")]) == 2
    assert "--workers is the local executor's" in one_line(capsys.readouterr().err)
    from parlour.agents.base import RandomAgent

    with pytest.raises(ValueError, match="not Agent objects"):
        arena.run_arena(ENV, [RandomAgent(0), "random"], executor="ray")


# --- what goes over the wire ----------------------------------------------------------
def test_only_plain_data_and_parlour_functions_go_over_the_wire(tmp_path):
    from parlour.agents.base import RandomAgent

    ckpt = random_checkpoint(tmp_path / "ck")
    shipped = distributed.ship_checkpoints([f"endgame:ckpt:{ckpt}", "random"])
    assert list(shipped) == [str(ckpt)]
    weights = shipped[str(ckpt)].policy
    assert all(
        isinstance(w, np.ndarray) and w.dtype == np.float32 for w in weights.values()
    )
    chunk = arena.ArenaChunk(ENV, {}, ("heuristic", "random"), 0, True, ((0, 7),))
    block = Block(ENV, (), "heuristic", ("random",), (1, 2))
    batch = league.Batch(
        ENV, {}, "{}", ("a", "b"), {"a": "random", "b": "random"}, {}, 0, 1
    )
    for data in (chunk, block, batch, shipped, (4, "heuristic", (1, 2))):
        assert distributed.check_wire(data) is data
    for bad in (RandomAgent(0), [lambda: 1], {"x": np.array([object()])}):
        with pytest.raises(TypeError):
            distributed.check_wire(bad)
    for fn in (arena.play_chunk, league.play_batch_task, play_block, _seat_block):
        distributed.check_function(fn)

    def local() -> None: ...

    for fn in (local, lambda job: job, np.mean, RandomAgent.act):
        with pytest.raises(TypeError, match="module-level function of Parlour"):
            distributed.check_function(fn)


def test_a_worker_plays_shipped_weights_without_the_file(tmp_path):
    """What a Ray task does with a ``ckpt:`` agent, here in this process: the weights
    shipped from the driver play, game for game, as the file did, with the file gone."""
    path = random_checkpoint(tmp_path / "ck", seed=3)
    spec = f"ckpt:{path}"
    local = arena.run_arena(ENV, [spec, "heuristic"], games=6, duplicate=True, seed=2)
    shipped = distributed.ship_checkpoints([spec])
    path.rename(tmp_path / "moved")
    deals = np.random.SeedSequence(2).generate_state(3, dtype=np.uint32).tolist()
    chunk = arena.ArenaChunk(
        ENV, {}, (spec, "heuristic"), 2, True, tuple(enumerate(deals))
    )
    rows = arena.play_chunk(chunk, shipped)
    assert [r[1] for r in rows] == local.candidate_scores
    assert [r[3] for r in rows] == local.candidate_wins
    with pytest.raises(ckpt_io.CheckpointError):  # without the weights: the file
        arena.play_chunk(chunk)


def test_ray_failures_are_one_line_and_task_errors_are_themselves():
    """A task's own error comes back as itself, not as Ray's wrapper with the worker's
    traceback; Ray's own failure (a lost raylet) as one line for the command line."""
    exceptions = pytest.importorskip("ray.exceptions")

    class FakeRay:
        def __init__(self, error: Exception):
            self.exceptions, self.error = exceptions, error

        def get(self, ref):
            raise self.error

    wrapped = exceptions.RayTaskError("play_chunk", "Traceback ...", KeyError("x"))
    with pytest.raises(KeyError):
        distributed._get(FakeRay(wrapped), None)
    lost = exceptions.RaySystemError("the raylet died\nmore lines")
    with pytest.raises(distributed.DistributedError) as info:
        distributed._get(FakeRay(lost), None)
    message = str(info.value)
    assert message.startswith("the Ray cluster failed (RaySystemError): ")
    assert "the raylet died" in message and "\n" not in message


# --- over a local Ray: the same results -----------------------------------------------
@pytest.fixture(scope="module")
def local_ray():
    """A Ray of this module's own (never a cluster someone started), 2 CPUs."""
    pytest.importorskip("ray")
    kwargs = {"num_cpus": 2, "include_dashboard": False, "configure_logging": False}
    with distributed.RaySession(init_kwargs=kwargs) as session:
        yield session.ray
    assert not session.ray.is_initialized()
    # parlour.integrations.rllib registers its envs with Ray Tune once, at import; the
    # first ray.init moves them into that Ray's store, and shutting it down loses them.
    # test_rllib.py runs after this module in the same process (one xdist group), so
    # register them again for the next Ray.
    rllib = sys.modules.get("parlour.integrations.rllib")
    if rllib is not None:
        rllib.register()


def _arena_lists(result: arena.ArenaResult) -> tuple:
    return (
        result.summary(),
        result.deal_index,
        result.candidate_scores,
        result.field_scores,
        result.candidate_wins,
    )


@pytest.mark.parametrize(
    "game, game_options, specs, duplicate",
    [
        (ENV, {}, ["heuristic", "random"], True),
        ("forty_fives_v0", {"episode": "deal"}, ["random", "heuristic"], False),
        (ENV, {}, ["CKPT", "heuristic:-win_cheaply"], True),
    ],
)
def test_arena_over_ray_is_the_local_arena(
    local_ray, tmp_path, capsys, game, game_options, specs, duplicate
):
    if specs[0] == "CKPT":
        specs = [f"ckpt:{random_checkpoint(tmp_path / 'ck', seed=1)}@sample", specs[1]]
    kw = {"games": 24, "duplicate": duplicate, "seed": 11, "env_options": game_options}
    local = arena.run_arena(game, specs, **kw)
    seen: list[int] = []
    remote = arena.run_arena(
        game, specs, executor="ray", progress=True, on_game=seen.append, **kw
    )
    assert _arena_lists(remote) == _arena_lists(local)
    assert seen == list(range(1, 25))  # after each game, as locally
    err = capsys.readouterr().err
    assert "ray: 2 CPUs on 1 node (a local Ray)" in err
    assert "24/24" in err  # the progress bar's total, reached
    assert local_ray.is_initialized()  # a Ray it did not start is left running


def test_tips_over_ray_are_the_local_tips(local_ray, tmp_path):
    """One German Whist tip against random play and a checkpoint (shipped as weights),
    and Fünfzehn – tot's seat-order games, both through the runner's Ray twin."""
    ckpt = random_checkpoint(tmp_path / "ck", seed=2)
    kw = {
        "tips": ["duck_duds"],
        "games": 8,
        "opponents": ["random"],
        "checkpoint": str(ckpt),
        "calibrate": 0,
        "agreement_deals": 2,
    }
    local = run_tips("german_whist", workers=1, **kw)
    remote = run_tips("german_whist", executor="ray", workers=None, **kw)
    assert remote.as_dict() == local.as_dict()
    for a, b in zip(remote.results, local.results, strict=True):
        assert np.array_equal(a.a, b.a) and np.array_equal(a.b, b.b)
    with distributed.RaySession() as session:
        assert game_seat_order(120, seed=4, runner=session) == game_seat_order(
            120, seed=4
        )


def test_league_over_ray_stores_the_local_games(local_ray, tmp_path):
    agents = ["random", "heuristic", "heuristic:-win_cheaply"]
    local = league.run_league(ENV, agents, games=4, db=tmp_path / "l.sqlite")
    remote = league.run_league(
        ENV, agents, games=4, db=tmp_path / "r.sqlite", executor="ray"
    )
    assert remote.stored == local.stored == 12
    assert stored_games(tmp_path / "r.sqlite") == stored_games(tmp_path / "l.sqlite")


def stored_games(db: Path) -> dict:
    """A league database's games: (table, deal, seating) -> seed, seats, returns,
    info."""
    conn = league.connect(db)
    rows = conn.execute(
        "SELECT pairing, deal, seating, seed, seats, returns, info FROM games"
    ).fetchall()
    conn.close()
    return {r[:3]: r[3:] for r in rows}


# --- the command line, slow -----------------------------------------------------------
def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _stop(processes: list, grace: float = 15.0) -> list:
    """SIGTERM, then SIGKILL after ``grace`` s, to these processes (ours, by PID);
    returns the ones that were still alive when asked to stop."""
    import psutil

    alive = [p for p in processes if p.is_running()]
    for p in alive:
        try:
            p.terminate()
        except psutil.NoSuchProcess:
            pass
    _, left = psutil.wait_procs(alive, timeout=grace)
    for p in left:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(left, timeout=5)
    return alive


@pytest.mark.slow
@pytest.mark.parametrize("command", ["arena", "league"])
def test_ctrl_c_over_ray_stops_cleanly(tmp_path, command):
    """Ctrl-C while the deals are out as Ray tasks: exit 130, no traceback, and the
    local Ray the command started (its control store, raylet and workers) is gone.
    The arena writes the games of the chunks back in order, as locally; the league
    keeps every batch it stored."""
    out = tmp_path / "out"
    if command == "arena":
        argv = ["arena", ENV, "--agents", "heuristic", "heuristic"]
        argv += ["--games", "200000", "--json", str(out)]
    else:
        argv = ["league", ENV, "--agents", "heuristic", "heuristic:-win_cheaply"]
        argv += ["--games", "200000", "--db", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "parlour.cli", *argv, "--executor", "ray"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
    )
    err = ""
    deadline = time.time() + 120
    while time.time() < deadline and "ray: " not in err:
        err += proc.stderr.readline()
    assert "ray: " in err, err
    time.sleep(5)  # tasks in flight, some done
    ray_processes = _descendants(proc.pid)
    assert ray_processes
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, rest
    assert "Traceback" not in rest
    if command == "arena":
        data = json.loads(out.read_text())
        assert data["interrupted"] is True and data["planned"] == 200000
        assert f"interrupted: kept {data['games']} of 200000 games" in rest
        assert data["games"] > 0 and data["games"] % 50 == 0  # chunks of 50 deals
    else:
        conn = league.connect(out)
        kept = league.count_games(conn)
        conn.close()
        assert f"interrupted: kept {kept} of 200000 games" in rest
        assert kept > 0 and kept % 8 == 0  # whole batches of 4 deals x 2 seatings
    import psutil

    _, alive = psutil.wait_procs(ray_processes, timeout=30)
    leftover = _stop(alive)
    assert not leftover, f"left running: {leftover}"


@pytest.mark.slow
def test_two_node_cluster_plays_the_local_games(tmp_path):
    """A head and a worker node started here with ``ray start`` (1 CPU each, a temp
    dir and a token of this test's own), ``parlour arena --executor ray --address``
    against it: the JSON is the local run's, both nodes played chunks (Ray's worker
    logs name their node), and only this cluster is stopped."""
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip("no ray command beside this Python")
    # short: Ray's socket paths under it must stay under the OS limit
    temp = Path(tempfile.mkdtemp(prefix="pt", dir="/tmp"))
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    env.pop("RAY_ADDRESS", None)
    port = free_port()
    common = ["--num-cpus", "1", "--disable-usage-stats"]
    started: list[int] = []  # the `ray start` commands' process groups

    def ray_start(*args: str) -> str:
        proc = subprocess.Popen(
            [str(ray_cli), "start", *args, *common],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its daemons stay in this group
        )
        started.append(proc.pid)
        text = proc.communicate(timeout=180)[0]
        assert proc.returncode == 0, text
        return text

    def ours() -> list:
        import psutil

        found = []
        for p in psutil.process_iter(["cmdline"]):
            try:
                if str(temp) in " ".join(p.info["cmdline"] or []) or (
                    os.getpgid(p.pid) in started
                ):
                    found += [p, *p.children(recursive=True)]
            except (psutil.NoSuchProcess, ProcessLookupError, PermissionError):
                pass
        return list({p.pid: p for p in found}.values())

    try:
        text = ray_start(
            "--head",
            "--port",
            str(port),
            "--temp-dir",
            str(temp),
            "--include-dashboard",
            "false",
        )
        address = re.search(r"ray start --address='([^']+)'", text).group(1)
        ray_start("--address", address)
        # enough games that the second node's first worker (seconds to start) gets
        # tasks before the head's worker has played them all
        argv = ["arena", ENV, "--agents", "heuristic", "heuristic", "--duplicate"]
        argv += ["--games", "600", "--seed", "9"]
        local, remote = tmp_path / "local.json", tmp_path / "ray.json"
        assert main([*argv, "--json", str(local), "--quiet"]) == 0
        run = subprocess.run(
            [sys.executable, "-m", "parlour.cli", *argv, "--json", str(remote)]
            + ["--executor", "ray", "--address", address],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr
        assert f"ray: 2 CPUs on 2 nodes (the cluster at {address})" in run.stderr
        assert json.loads(remote.read_text()) == json.loads(local.read_text())
        logs = next(temp.glob("session_2*/logs"))
        nodes, seen = set(), []
        for out in logs.glob("worker-*.out"):
            text = out.read_text(errors="replace")
            pid = out.stem.rsplit("-", 1)[1]
            found = set()
            for log in logs.glob(f"python-core-worker-*_{pid}.log"):
                found |= set(re.findall(r"node_id=(\w+)", log.read_text()))
            seen.append((out.name[-30:], text.count("play_chunk"), sorted(found)))
            if ":task_name:play_chunk" in text:
                nodes |= found
        assert len(nodes) == 2, seen
    finally:
        _stop(ours())
        left = ours()
        shutil.rmtree(temp, ignore_errors=True)
        assert not left, f"left running: {left}"
