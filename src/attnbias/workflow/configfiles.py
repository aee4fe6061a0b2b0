"""The config files themselves, read as text: a config is code when it is a YTE template.

Snakemake loads every config file through YTE (`snakemake.common.configfile`): a file whose
top level holds `__use_yte__: true` has its `?...` keys and values evaluated as Python. For
a `--configfile` that happens in Snakemake's command line, before the Snakefile runs, so
this module cannot stop it; for the default config (the Snakefile's `configfile:`) it
can, and the Snakefile checks that file before loading it. Either way no job runs: a
template is refused by file name, whatever it evaluated to (docs/running.md).

Read bounded, each refusal naming the file: what is not a regular file (a FIFO,
a directory, /dev/zero behind a symlink) or holds more than MAX_BYTES is refused before it
is read whole; a YAML whose aliases expand past MAX_NODES nodes (a "billion laughs") once
composed, before anything is built from it; nesting deeper than configkeys.MAX_DEPTH, with
its line; a key given twice in one mapping (YAML keeps the last, silently) with its lines;
text that is not UTF-8, and a Python object's tag (`!!python/object/apply:...`), with the
line. Snakemake refuses those last two in a --configfile itself, naming neither file nor
line, and a list nested 1,000 deep with a RecursionError traceback from its YAML loader:
`python -m attnbias.workflow.configfiles FILE...` (main) names them (docs/workflow.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from attnbias.workflow.configkeys import MAX_DEPTH
from attnbias.workflow.file_kind import open_regular

YTE_KEY = "__use_yte__"  # the top-level key that makes a YAML file a YTE template
# The most bytes a config file may hold: the default config holds 36 KiB; a larger file is
# no hand-written config (a log, a data file), and is not read whole to find that out.
MAX_BYTES = 1 << 20
# The most YAML nodes a config may compose, an alias counted as the nodes it repeats: the
# default config composes about 2,700. PyYAML shares an alias's object, so loading a
# "billion laughs" (9 aliases of 9 aliases ...: 10^9 nodes) is quick, but whatever walks
# the config after (the schema's validation, the config's hash, a copy) expands it.
MAX_NODES = 100_000
_YAML_TAG = "tag:yaml.org,2002:"  # a tag `!!x` in full
_MERGE = _YAML_TAG + "merge"  # the key `<<` of a merge
# `!!python/object/apply:os.system` and the like: PyYAML's unsafe loaders build Python
# objects from them (Snakemake's loader refuses them unnamed: docs/workflow.md)
_PYTHON = _YAML_TAG + "python/"


class ConfigFileError(ValueError):
    """A config file the workflow refuses as a whole; the message names the file."""


class _Refused(Exception):
    """Why a config file is not read or not loaded (read_plain adds the file's name)."""


def name(path) -> str:
    """A config file's path relative to the working directory where it lies below it (a
    copied project then still knows its own config files), else absolute: how messages
    and results folders' owner records name it."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


def read_plain(path) -> dict:
    """The config file at `path` as plain YAML (JSON is YAML too), nothing evaluated.

    Raises ConfigFileError naming the file where it is a YTE template, or not a mapping, or
    not read (_read_bounded), or not loaded (_load)."""
    try:
        data = _load(_read_bounded(path))
    except _Refused as err:
        # a symlink is named with what it resolves to (config.yaml -> /dev/zero)
        via = f" ({path} resolves to it)" if Path(path).absolute() != Path(path).resolve() else ""
        raise ConfigFileError(f"config file {name(path)}{via}: {err}") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ConfigFileError(f"config file {name(path)}: nested too deeply to read") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ConfigFileError(f"config file {name(path)}: not readable as YAML ({err})") from None
    if isinstance(data, dict) and YTE_KEY in data:
        raise ConfigFileError(
            f"config file {name(path)} is a YTE template (top-level key {YTE_KEY}): Snakemake "
            "evaluates its ?-expressions as Python when it loads it, so a config file is "
            "code. This workflow runs plain YAML configs only: remove the key and write "
            "the values out, and run only config files you trust (docs/running.md)"
        )
    if not isinstance(data, dict):
        raise ConfigFileError(
            f"config file {name(path)}: holds no mapping of keys at its top level"
        )
    return data


def refuse_templates(paths: Sequence) -> None:
    """Read each config file of a run as text; refuse the first YTE template by name."""
    for path in paths:
        read_plain(path)


def _read_bounded(path) -> str:
    """The text of the regular file that `path` resolves to, of at most MAX_BYTES. Its kind
    is checked before opening (opening a FIFO waits for a writer), and again on what was
    opened (the path may have changed in between); the read stops past the limit."""
    with open_regular(path, lambda kind: _Refused(f"{kind}, not a regular file: not read")) as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise _Refused(f"holds more than {MAX_BYTES} bytes (MAX_BYTES): no config is, not read")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise _Refused(
            f"not UTF-8 text (byte {raw[err.start]:#04x} on line {line}): save it as UTF-8"
        ) from None


class _NoKeyTwice:
    """A constructor that refuses a key given twice in one mapping, with its lines (checked
    before SafeLoader flattens a merge `<<`, whose keys the mapping may give again)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            lines = {}  # each key's line
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:  # `<<`: merged, not a key (keys it brings may repeat)
                    continue
                key, line = self.construct_object(key_node, deep=True), key_node.start_mark.line
                try:
                    given = key in lines
                except TypeError:  # an unhashable key: PyYAML's own error says so
                    continue
                if given:
                    raise _Refused(
                        f"the key {key!r} is given twice in one mapping (lines {lines[key] + 1} "
                        f"and {line + 1}); YAML would keep the last silently: give it once"
                    )
                lines[key] = line
        return super().construct_mapping(node, deep=deep)


class _Loader(_NoKeyTwice, yaml.SafeLoader):
    """PyYAML's safe loader (pure Python) that refuses a key given twice (_NoKeyTwice), and
    nesting deeper than MAX_DEPTH, with its line, before its recursive composer could
    overflow. It words every refusal (_load)."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.CollectionStartEvent):
            if self._depth >= MAX_DEPTH:
                line = self.peek_event().start_mark.line + 1
                raise _Refused(
                    f"nested more than {MAX_DEPTH} levels deep (MAX_DEPTH) on line {line}, "
                    "where the default config nests 7: remove the nesting"
                )
            self._depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)


# libyaml's parser (about 6 times faster on the default config: 36 KiB, read by every run;
# docs/speed.md), where PyYAML was built with it. It composes in C (libyaml stops past 1,000
# levels), so the depth is checked on the composed nodes (_too_deep).
_FastLoader = (
    type("_FastLoader", (_NoKeyTwice, yaml.CSafeLoader), {}) if yaml.__with_libyaml__ else None
)


def _load(text: str):
    """The YAML document `text`, composed, its size checked (_expanded), then built.

    Read by libyaml where it can; whatever it refuses or cannot read is read again by
    _Loader, whose refusal names what and where, as the only loader did before (so each
    message is the same, whichever loader came first)."""
    if _FastLoader is not None:
        try:
            return _load_with(_FastLoader, text, deep_check=True)
        except (_Refused, RecursionError, yaml.YAMLError):
            pass
    return _load_with(_Loader, text, deep_check=False)


def _load_with(loader_class, text: str, deep_check: bool):
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:  # an empty file
            return None
        if deep_check and _too_deep(node, 0, set()):
            raise _Refused("nested past MAX_DEPTH")  # _load words it (_Loader)
        _expanded(node, {}, set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _too_deep(node, depth: int, seen: set) -> bool:
    """Whether a collection under `node` lies inside MAX_DEPTH others (as _Loader counts:
    an alias is not followed, being its anchor's node seen before)."""
    if id(node) in seen or not isinstance(node, yaml.CollectionNode):
        return False
    if depth >= MAX_DEPTH:
        return True
    seen.add(id(node))
    return any(_too_deep(child, depth + 1, seen) for child in _children(node))


def _children(node) -> list:
    """A node's nodes in the document's order: a mapping's keys and values, a sequence's
    items; none for a scalar."""
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return node.value if isinstance(node, yaml.SequenceNode) else []


def _expanded(node, sizes: dict, open_: set) -> int:
    """The nodes `node` stands for, an alias counted as all it repeats. An alias is its
    anchor's node again, whose count is kept (`sizes`): the cost is the file's, not the
    expansion's. Refused past MAX_NODES, and where an alias holds itself (`open_`)."""
    if id(node) in sizes:
        return sizes[id(node)]
    line = node.start_mark.line + 1
    if node.tag.startswith(_PYTHON):
        raise _Refused(
            f"a Python object's tag (!!{node.tag.removeprefix(_YAML_TAG)}, line {line}): "
            "config files are plain YAML, no Python objects: write the value out"
        )
    if id(node) in open_:
        raise _Refused(f"an alias that contains itself (line {line}): not loaded")
    open_.add(id(node))
    size = 1 + sum(_expanded(child, sizes, open_) for child in _children(node))
    if size > MAX_NODES:
        raise _Refused(
            f"composes more than {MAX_NODES} YAML nodes (MAX_NODES), an alias counted as the "
            f"nodes it repeats (from line {line}): no config does (aliases of aliases, a "
            "'billion laughs'?), not loaded"
        )
    open_.discard(id(node))
    sizes[id(node)] = size
    return size


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m attnbias.workflow.configfiles FILE...`: each config file read as the
    workflow reads it, a refusal naming the file, the line and what to do (Snakemake's own
    loader, which reads a --configfile first, names neither: docs/workflow.md)."""
    parser = argparse.ArgumentParser(
        prog="python -m attnbias.workflow.configfiles",
        description="Check config files as the workflow reads them (plain YAML, bounded).",
    )
    parser.add_argument("configfiles", nargs="+", metavar="CONFIGFILE")
    refused = False
    for path in parser.parse_args(argv).configfiles:
        try:
            read_plain(path)
        except ConfigFileError as err:
            refused = True
            print(f"error: {err}", file=sys.stderr)
        else:
            print(f"{name(path)}: readable as plain YAML")
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
