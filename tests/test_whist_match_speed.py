"""benchmarks/whist_match_speed.py: bad arguments are refused in one line before any
match is played, and a failing side is reported in one line."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "whist_match_speed.py"


def _script():
    spec = importlib.util.spec_from_file_location("whist_match_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--matches", "3"], "--matches must be an even number"),
        (["--matches", "0"], "--matches must be an even number"),
        (["--reference-tt", "0"], "--reference-tt must be positive"),
        (["--reference", "/no/such/python"], "is not an executable Python"),
        (["--json", "/proc/no/such/figures.json"], "cannot create --json"),
        (["--variant", "bridge"], "invalid choice"),
    ],
)
def test_bad_arguments_are_refused_before_any_match(argv, message, capsys, monkeypatch):
    module = _script()
    played = []
    monkeypatch.setattr(module, "run_side", lambda *a: played.append(a))
    with pytest.raises(SystemExit) as exit_:
        module.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and not played


def test_a_side_that_fails_is_one_line():
    module = _script()
    args = argparse.Namespace(variant="german", matches=2, seed=1)
    with pytest.raises(SystemExit) as exit_:
        module.run_side("/bin/false", args, None)
    text = str(exit_.value.code)
    assert "the side run by /bin/false failed" in text and "\n" not in text


@pytest.mark.parametrize("jit", ["0", "1"])
def test_a_side_runs_with_its_parlour_jit(jit, tmp_path, monkeypatch):
    """``--jit`` / ``--reference-jit`` reach the side's child process as
    ``PARLOUR_JIT``, whatever this environment says."""
    module = _script()
    monkeypatch.setenv("PARLOUR_JIT", "1" if jit == "0" else "0")
    fake = tmp_path / "python"  # stands for the interpreter: prints what it was given
    fake.write_text('#!/bin/sh\necho "{\\"jit\\": \\"$PARLOUR_JIT\\"}"\n')
    fake.chmod(0o755)
    args = argparse.Namespace(variant="german", matches=2, seed=1)
    assert module.run_side(str(fake), args, None, jit) == {"jit": jit}
