"""Where BERT's weights are: a local folder, the Hugging Face cache, or the hub; found without
importing torch or transformers, so that a missing model is reported within seconds.

Why a check of its own: transformers' loaders on a machine without a network retry the hub
for about 45 s before they fail (huggingface_hub's download backoff). Here a hub name is
looked up in the local cache first, then with one request to the hub, without retries.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnbias.data.missing import MissingDataError

MODEL_KEY = "real_data.models.bert"
# Seconds the one request that asks whether the hub has a model may take
HUB_PROBE_TIMEOUT_S = 5.0


def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE asks for no network."""
    flags = (os.environ.get(k, "") for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return any(v.strip().lower() in ("1", "true", "yes", "on") for v in flags)


def model_missing(name: str, why: str, *, local: bool) -> MissingDataError:
    """The error for a model that is not there; `local`: `name` is a folder, not a hub name."""
    hub = "bert-base-uncased" if local else name
    target = name if local else f"models/{hub.split('/')[-1]}"
    how = (
        f"{why} Fetch the weights once on a machine with a network: `hf download {hub} "
        f"--local-dir {target}` (older huggingface_hub: `huggingface-cli download {hub} "
        f"--local-dir {target}`), or in Python `AutoTokenizer.from_pretrained('{hub}')"
        f".save_pretrained('{target}')` and `AutoModel.from_pretrained('{hub}')"
        f".save_pretrained('{target}')`; then set `{MODEL_KEY}: {target}`. Offline, a hub "
        "name is found only in the Hugging Face cache (~/.cache/huggingface)."
    )
    return MissingDataError(f"BERT model {name!r}", name, MODEL_KEY, how)


def in_cache(name: str) -> bool:
    """True when hub model `name` has its config.json in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(name, "config.json"), str)


def hub_unreachable(name: str) -> str | None:
    """None when the hub answers for model `name`; else why not (no network, no such model,
    a gated one without a token): one request, no retries."""
    from huggingface_hub import model_info

    try:
        model_info(name, timeout=HUB_PROBE_TIMEOUT_S)
    except Exception as err:  # any failure (DNS, connection, HTTP status) means: not there
        return f"{type(err).__name__}: {err}"
    return None


def _looks_like_path(name: str) -> bool:
    return os.path.isabs(name) or name.startswith(("./", "../", "~", ".\\", "..\\"))


def find_model(name_or_path: str) -> bool:
    """True for a local save_pretrained folder, False for a hub name in the cache or on the
    hub; MissingDataError (naming the model, `real_data.models.bert` and how to get it) for
    a folder without config.json, a path that is no folder, or a hub name in neither the
    cache nor (HF_HUB_OFFLINE unset, the hub answering) the hub."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise model_missing(str(path), f"The folder {path} holds no config.json.", local=True)
        return True
    if path.exists() or _looks_like_path(name_or_path):
        raise model_missing(name_or_path, f"No model folder at {path}.", local=True)
    if in_cache(name_or_path):
        return False
    if hub_offline():
        why = "Not in the Hugging Face cache and HF_HUB_OFFLINE is set."
        raise model_missing(name_or_path, why, local=False)
    why = hub_unreachable(name_or_path)
    if why is not None:
        why = f"Not in the Hugging Face cache, and the hub did not answer ({why})."
        raise model_missing(name_or_path, why, local=False)
    return False
