"""Transitional alias of `attnbias.stochastic` (the stochastic optimizers SNGD, SPS).

Only workflow/rules/common.smk still imports this name (`_check_real_experiments`); once it
imports `attnbias.stochastic`, delete this file.
"""

from attnbias.stochastic import *  # noqa: F403
from attnbias.stochastic import __all__  # noqa: F401
