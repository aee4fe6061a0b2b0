"""A fake quotes Build of fig2's runs for the cap tables and the config page's tests
(attnbias.quotes.cap_tables, attnbias.quotes.pages.config)."""

from __future__ import annotations

import math

import pandas as pd


class FakeBuild:
    """A build's series and caps, from per-method per-seed largest steps (log10) reached
    linearly in t over a grid 0, 10, 100, 1000 (the logged steps stop at 100)."""

    def __init__(self, largest: dict, caps: dict):
        self.largest, self.caps = largest, caps

    def series(self, experiment, optimizer, metric):
        grid = [0, 10, 100, 1000]
        frame = {}
        for seed, top in enumerate(self.largest[optimizer]):
            values = [t / 1000 * top * math.log(10) for t in grid]
            if metric == "log_step_W":  # logged steps: the last row has none, and t = 100's
                values = values[:3] + [math.nan]
            else:
                values[0] = math.nan
            frame[seed] = values
        return pd.DataFrame(frame, index=grid)

    def cap(self, experiment, optimizer):
        return self.caps[optimizer]


LARGEST = {"ngd": [147.66, 131.1], "ngd-mom": [1481.29, 1315.49], "ps": [4344.3, 4344.26]}
CAPS = {"ngd": 1e148, "ngd-mom": 1e148, "ps": 1e308}
