"""The seeds of the rows beyond the paper, in words (the claims' section "Beyond the
paper" says them): the tuning seed, whose runs chose the step lengths (each geometry
experiment's config key tuning_seed, below first_seed), and the seeds the rows report,
which chose nothing."""

from __future__ import annotations

from attnbias.claims.beyond import GEOMETRY_LAYOUTS


def seeds_sentence(experiments: dict, tables: dict) -> str:
    """The seeds of the rows beyond the paper, in words: the tuning seed (each geometry
    experiment's config key tuning_seed: the seed whose runs chose the step lengths, never
    reported) and the seeds each experiment's table reports, which chose nothing; "" where
    this build holds no geometry table. A tuning seed among the reported ones is refused."""
    reported, tuning = [], []
    for name, e in experiments.items():
        if e.get("layout") not in GEOMETRY_LAYOUTS or name not in tables:
            continue
        seeds = sorted(int(s) for s in set(tables[name]["seed"]))
        chose = e.get("tuning_seed")
        if chose is not None:
            if chose in seeds:
                raise ValueError(
                    f"experiment {name}: its tuning_seed {chose} chose constants but is among "
                    f"the seeds its table reports ({seeds}): raise its first_seed above it"
                )
            tuning.append(f"seed {chose} of {name} ({e.get('data') or 'its data'})")
        reported.append(f"{name}'s {seed_words(seeds)}")
    if not reported:
        return ""
    if not tuning:
        return (
            f"Seeds: the rows report {' and '.join(reported)}; the config names no tuning seed "
            "(tuning_seed) for these experiments."
        )
    return (
        f"Seeds: the step lengths (the constants of ours) were chosen on the tuning seed, "
        f"{' and '.join(tuning)}, which is never reported. The rows report "
        f"{' and '.join(reported)}, which chose nothing."
    )


def seed_words(seeds: list[int]) -> str:
    if len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]} to {seeds[-1]}"
    return f"seed{'s' * (len(seeds) > 1)} {', '.join(map(str, seeds))}"
