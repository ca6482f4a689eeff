"""A test-only hook that stops a training process at a named point, so that a test
can kill it there (``kill -9``) and check what ``--resume`` keeps.

Set ``PARLOUR_TEST_PAUSE_AT=POINT`` (or ``POINT:N``, the N-th time the point is
reached) and ``PARLOUR_TEST_PAUSE_MARK=FILE``: when the process reaches the point it
writes its process id to FILE and waits until it is killed. Unset (always, outside
tests), `pause_point` returns at once. The points, in a run's order: ``teacher games``
(a chunk of teacher games stored), ``fit`` (the fit about to start), ``self-play`` (a
rollout collected, not yet trained on), ``evaluation`` (an evaluation played, not yet
recorded), ``checkpoint`` (a checkpoint's weights written under their temporary name).
"""

from __future__ import annotations

import os
import time

PAUSE_AT = "PARLOUR_TEST_PAUSE_AT"
PAUSE_MARK = "PARLOUR_TEST_PAUSE_MARK"
POINTS = ("teacher games", "fit", "self-play", "evaluation", "checkpoint")
_reached: dict[str, int] = {}


def pause_point(name: str) -> None:
    """Wait here for good when ``PARLOUR_TEST_PAUSE_AT`` names this point (and this
    is its N-th time); return at once otherwise."""
    spec = os.environ.get(PAUSE_AT)
    if not spec:
        return
    point, _, count = spec.partition(":")
    if point != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] != (int(count) if count else 1):
        return
    mark = os.environ[PAUSE_MARK]
    with open(mark + ".part", "w") as f:
        f.write(str(os.getpid()))
    os.replace(mark + ".part", mark)  # the test sees the whole id or nothing
    while True:  # until the test's SIGKILL
        time.sleep(60)
