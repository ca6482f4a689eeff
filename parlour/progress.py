"""Progress bars for every command, in a terminal and in a log.

In a terminal a bar redraws itself in place, as tqdm does. When the stream is not a
terminal (a log file, a pipe, CI), each redraw would be another carriage-return update,
thousands per run; there the bar prints a plain line at most every `LOG_INTERVAL`
seconds, and its final state at the end.
"""

from __future__ import annotations

import re
import sys
from typing import IO, Any

#: seconds between two progress lines when the stream is not a terminal
LOG_INTERVAL = 5.0
# cursor moves (tqdm's nested bars); a log has no cursor
_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class _Lines:
    """A stream for tqdm that turns its carriage-return redraws into whole lines and
    drops repeats (tqdm draws the final state again when it closes)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.last = ""

    def write(self, text: str) -> int:
        for part in _ESCAPE.sub("", text).split("\r"):
            line = part.rstrip("\n").rstrip()
            if line and line != self.last:
                self.stream.write(line + "\n")
                self.last = line
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False


def is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is an interactive terminal."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress_bar(*args: Any, file: IO[str] | None = None, **kwargs: Any):
    """A tqdm bar (same arguments) on ``file`` (default stderr): redrawn in place on a
    terminal, plain lines at most every `LOG_INTERVAL` seconds elsewhere."""
    from tqdm import tqdm

    stream = file if file is not None else sys.stderr
    if is_terminal(stream):
        return tqdm(*args, file=stream, **kwargs)
    kwargs["mininterval"] = max(kwargs.get("mininterval", 0.1), LOG_INTERVAL)
    # tqdm lowers miniters when updates are rare; the time limit is all we want
    kwargs.setdefault("miniters", 1)
    kwargs["dynamic_ncols"] = False
    # no bar graphic, and no width to cut a long description (a checkpoint's path) and
    # the count after it: "desc:  40%| 96/240 [00:05<00:07, 19.2game/s]"
    kwargs.setdefault("bar_format", "{desc}: {percentage:3.0f}%{r_bar}")
    # nested bars (an evaluation inside training) would move the cursor up and down:
    # in a log each bar writes its own lines
    kwargs["position"] = 0
    return _log_bar_class()(*args, file=_Lines(stream), **kwargs)


def _log_bar_class():
    from tqdm import tqdm

    class LogBar(tqdm):
        """A tqdm bar whose explicit redraws (a new total, a postfix) obey the same
        time limit as its updates; closing still writes the final state."""

        def refresh(self, nolock: bool = False, lock_args: Any = None) -> bool:
            last = getattr(self, "last_print_t", None)  # unset: the opening line
            if last is not None and self._time() - last < self.mininterval:
                return False
            self.last_print_t = self._time()
            return super().refresh(nolock=nolock, lock_args=lock_args)

    return LogBar
