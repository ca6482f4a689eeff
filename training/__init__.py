"""Arena, statistics and (later) self-play training."""
