"""Progress bars: redrawn in place on a terminal; in a log, a plain line at most every
few seconds and one at the end, never a carriage return per game."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time

import pytest

from parlour.progress import LOG_INTERVAL, progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_log_gets_a_line_per_interval(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("tqdm.std.time", clock)
    log = io.StringIO()
    seconds, step = 62.0, 0.01
    n = int(seconds / step)
    with progress_bar(total=n, desc="games", file=log) as bar:
        for i in range(n):
            clock.now += step
            bar.update(1)
            if i % 100 == 0:  # a redraw asked for explicitly obeys the limit too
                bar.set_postfix_str(f"at {i}")
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    # the opening line, at most one per interval, the final state
    assert len(lines) <= 2 + seconds / LOG_INTERVAL
    assert len(lines) >= seconds / LOG_INTERVAL - 1
    assert lines[0].startswith("games:   0%") and f"{n}/{n}" in lines[-1]


def test_fast_run_in_a_log_is_two_lines():
    log = io.StringIO()
    with progress_bar(total=50_000, desc="games", file=log) as bar:
        for _ in range(50_000):
            bar.update(1)
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and "50000/50000" in lines[1]


def test_nested_bars_in_a_log_move_no_cursor():
    log = io.StringIO()
    with progress_bar(total=3, desc="outer", file=log) as outer:
        for _ in range(3):
            with progress_bar(total=2, desc="inner", leave=False, file=log) as inner:
                inner.update(2)
            outer.update(1)
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    assert "3/3" in text.splitlines()[-1]


def test_terminal_bar_redraws_in_place():
    tty = _Terminal()
    with progress_bar(total=10, desc="games", file=tty) as bar:
        bar.update(10)
    assert "\r" in tty.getvalue()


_PARLOUR = [sys.executable, "-m", "parlour.cli"]


@pytest.mark.parametrize(
    "argv",
    [
        "arena german_whist_v0 --agents random random --games 600",
        "league german_whist_v0 --agents random heuristic --games 60 "
        "--db {tmp}/league.sqlite",
        "tips german_whist --tip duck_duds --games 6 --workers 1 --out {tmp}/tips",
        "train german_whist_v0 --set total_timesteps=256 --set n_steps=64 "
        "--set eval_games=4 --set warm_start='' --run-dir {tmp}/run",
    ],
    ids=["arena", "league", "tips", "train"],
)
def test_commands_piped_write_plain_lines(tmp_path, argv):
    argv = argv.format(tmp=tmp_path).split()
    start = time.monotonic()
    done = subprocess.run(
        [*_PARLOUR, *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "\r" not in err and "\x1b" not in err
    bars = [line for line in err.splitlines() if re.search(r"\d+%\|", line)]
    assert bars, err
    names = {line.split(":")[0] for line in bars}
    # per bar: its opening line, its final state, one line per interval in between
    assert len(bars) <= len(names) * (2 + elapsed / LOG_INTERVAL), err
