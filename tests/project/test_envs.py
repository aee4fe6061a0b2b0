"""The conda envs (envs/*.yaml), checked without conda (none can be installed here).

- Every rule in workflow/rules/*.smk names an env file with `conda:`, and the file exists.
- Each env file has the expected shape: a name, conda-forge, `==` pins, and a pip section
  that installs this project (envs/README.md).
- Every third-party module that a rule's code imports (its script and the package modules
  that imports, transitively: attnbias.workflow.codedeps) is declared in that rule's env.
- The pins agree with the project's own install: each satisfies pyproject.toml's range
  and equals constraints.txt where that pins.

The rules come from Snakemake itself (the workflow loaded through its API), so a rule is
seen exactly as Snakemake sees it; the rule files' text only names the rules to test.
A fabricated workflow shows that the checks fail where they should.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from attnbias.workflow.codedeps import module_files

REPO = Path(__file__).resolve().parents[2]
ENVS = REPO / "envs"
PROJECT_LINE = "--editable ${ATTNBIAS_ROOT}"  # how every env installs this project

# import name -> names a conda-forge (or PyPI) package providing it may have; by default
# the import name itself
PROVIDERS = {
    "torch": {"pytorch", "torch"},
    "sklearn": {"scikit-learn"},
    "yaml": {"pyyaml"},
    "PIL": {"pillow"},
    "matplotlib": {"matplotlib", "matplotlib-base"},
    "seaborn": {"seaborn", "seaborn-base"},
}
CONDA_TO_PYPI = {"pytorch": "torch", "matplotlib-base": "matplotlib", "seaborn-base": "seaborn"}
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.\-]*)==(?P<version>[^\s=<>!,;]+)$")


# ---- the checker ---------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    name: str
    snakefile: Path
    conda: str | None  # as written, relative to the rule file's folder
    script: Path | None
    runs_code: bool  # False for a rule that only collects inputs (no script/shell/run)
    is_run: bool


@cache
def load_rules(snakefile: Path) -> dict[str, Rule]:
    """Every rule of the workflow, as Snakemake parsed it (its default config)."""
    environ, cwd = dict(os.environ), os.getcwd()  # loading sets variables (common.smk)
    try:
        return _parse_rules(snakefile)
    finally:
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)


def _parse_rules(snakefile: Path) -> dict[str, Rule]:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
        StorageSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(),
            storage_settings=StorageSettings(),
            snakefile=snakefile,
            workdir=snakefile.parent,
        )._workflow  # the parsed workflow; its rules are not exposed otherwise
        rules = {}
        for rule in workflow.rules:
            folder = Path(str(rule.snakefile)).parent
            conda = rule.conda_env
            rules[rule.name] = Rule(
                name=rule.name,
                snakefile=Path(str(rule.snakefile)),
                conda=conda if isinstance(conda, str) or conda is None else repr(conda),
                script=(folder / rule.script).resolve() if rule.script else None,
                runs_code=not rule.norun,
                is_run=rule.is_run,
            )
        return rules


def rule_names_in(rule_file: Path) -> list[str]:
    """The rules a rule file writes: `rule NAME:`, `checkpoint NAME:` and a rule it derives,
    `use rule OTHER as NAME with:`."""
    text = rule_file.read_text()
    written = re.findall(r"^(?:rule|checkpoint)\s+(\w+)\s*:", text, re.M)
    return written + re.findall(r"^use\s+rule\s+\w+\s+as\s+(\w+)", text, re.M)


class EnvError(ValueError):
    pass


@dataclass(frozen=True)
class Env:
    path: Path
    conda: dict[str, str]  # conda-forge package -> pinned version
    pip: dict[str, str]  # PyPI package -> pinned version (besides the project itself)

    def declares(self) -> set[str]:
        return {canonicalize_name(n) for n in (*self.conda, *self.pip)}


def read_env(path: Path) -> Env:
    """Parse and check an env file's shape; EnvError names what is wrong."""
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise EnvError(f"{path.name}: not YAML: {err}") from None
    if not isinstance(spec, dict) or set(spec) != {"name", "channels", "dependencies"}:
        keys = sorted(spec) if isinstance(spec, dict) else type(spec).__name__
        raise EnvError(f"{path.name}: keys must be name, channels, dependencies; got {keys}")
    if spec["name"] != f"attnbias-{path.stem}":
        raise EnvError(f"{path.name}: name must be attnbias-{path.stem}, not {spec['name']!r}")
    channels = spec["channels"]
    if not isinstance(channels, list) or channels[:1] != ["conda-forge"]:
        raise EnvError(f"{path.name}: channels must start with conda-forge; got {channels}")
    if "defaults" in channels:
        raise EnvError(f"{path.name}: the defaults channel mixes builds with conda-forge's")
    conda, pip, project = {}, {}, 0
    for dep in spec["dependencies"]:
        if isinstance(dep, dict) and set(dep) == {"pip"} and isinstance(dep["pip"] or [], list):
            for line in dep["pip"] or []:
                if line == PROJECT_LINE:
                    project += 1
                else:
                    pip.update([_pin(path, line)])
        elif isinstance(dep, str):
            conda.update([_pin(path, dep)])
        else:
            raise EnvError(f"{path.name}: unexpected dependency entry {dep!r}")
    if project != 1:
        raise EnvError(f"{path.name}: the pip section must hold {PROJECT_LINE!r} once")
    for needed in ("python", "pip"):
        if needed not in conda:
            raise EnvError(f"{path.name}: pin {needed} among the conda dependencies")
    return Env(path, conda, pip)


def _pin(path: Path, text) -> tuple[str, str]:
    match = PIN.match(str(text))
    if not match:
        raise EnvError(f"{path.name}: {text!r} is not pinned as name==version")
    return match["name"], match["version"]


def third_party_imports(script: Path) -> dict[str, str]:
    """Top-level modules outside the standard library and this package that `script` and
    the package modules it uses import (anywhere in the file: a function-level import
    runs too, when the function does); module -> the first file importing it."""
    found = {}
    sources = [str(script), *module_files(str(script))]
    for source in (s for s in sources if s.endswith(".py")):  # not fast.py's C kernel
        for node in ast.walk(ast.parse(Path(source).read_text(), filename=source)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "attnbias":
                    found.setdefault(top, source)
    return found


def providers(module: str) -> set[str]:
    return {canonicalize_name(n) for n in PROVIDERS.get(module, {module})}


def env_of(rule: Rule) -> Path:
    return (rule.snakefile.parent / rule.conda).resolve()


def rule_problems(rule: Rule, envs_dir: Path = ENVS) -> list[str]:
    """What is wrong with a rule's env: missing, or missing a module the rule imports."""
    where = f"rule {rule.name} ({rule.snakefile.name})"
    if not rule.runs_code:
        return []
    if rule.is_run:
        return [f"{where}: a run: block cannot run in a conda env; move its code to a script"]
    if rule.conda is None:
        return [f"{where}: no conda: directive (envs/README.md lists the envs)"]
    path = env_of(rule)
    if path.parent != envs_dir.resolve() or path.suffix != ".yaml":
        return [f"{where}: conda: {rule.conda!r} is not an env file in {envs_dir}"]
    if not path.exists():
        return [f"{where}: conda: {rule.conda!r}: {path} does not exist"]
    try:
        env = read_env(path)
    except EnvError as err:
        return [f"{where}: {err}"]
    if rule.script is None:
        return []
    return [
        f"{where}: {Path(source).name} imports {module}, which {path.name} does not declare "
        f"(as any of {sorted(providers(module))})"
        for module, source in sorted(third_party_imports(rule.script).items())
        if not providers(module) & env.declares()
    ]


def project_requirements() -> tuple[dict[str, list[Requirement]], dict[str, Version], str]:
    """pyproject.toml's requirements by name, constraints.txt's pins, requires-python."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        declared += extra
    requirements: dict[str, list[Requirement]] = {}
    for text in declared:
        req = Requirement(text)
        if canonicalize_name(req.name) != canonicalize_name(project["name"]):
            requirements.setdefault(canonicalize_name(req.name), []).append(req)
    constraints = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            constraints[canonicalize_name(name)] = Version(version)
    return requirements, constraints, project["requires-python"]


def pin_problems(env: Env) -> list[str]:
    """Pins outside pyproject.toml's ranges or off constraints.txt's pins."""
    requirements, constraints, requires_python = project_requirements()
    problems = []
    if Version(env.conda["python"]) not in Requirement(f"python{requires_python}").specifier:
        problems.append(f"python=={env.conda['python']} is outside requires-python")
    pins = [(CONDA_TO_PYPI.get(n, n), v) for n, v in env.conda.items()] + list(env.pip.items())
    for name, version in pins:
        key = canonicalize_name(name)
        for req in requirements.get(key, []):
            if not req.specifier.contains(Version(version), prereleases=True):
                problems.append(f"{name}=={version} is outside pyproject.toml's {req}")
        if key in constraints and Version(version) != constraints[key]:
            problems.append(f"{name}=={version}, but constraints.txt pins {constraints[key]}")
    return [f"{env.path.name}: {p}" for p in problems]


# ---- the project's rules and envs ----------------------------------------------------

RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
RULES = [name for path in RULE_FILES for name in rule_names_in(path)]
ENV_FILES = sorted(ENVS.glob("*.yaml"))


@pytest.fixture(scope="module")
def rules() -> dict[str, Rule]:
    return load_rules(REPO / "Snakefile")


def test_snakemake_sees_the_rules_of_the_rule_files(rules):
    """Every rule is written in a rule file (none made in a loop, one per experiment), so the
    stages' names are the rules' names."""
    seen = {name for name, rule in rules.items() if rule.snakefile.parent.name == "rules"}
    assert seen == set(RULES)
    assert {"data", "svm", "train", "aggregate", "figure", "claims"} <= seen


@pytest.mark.parametrize("name", RULES)
def test_rule_runs_in_an_env_that_declares_its_imports(rules, name):
    assert rule_problems(rules[name]) == []


def test_rule_families_share_envs(rules):
    """The envs the synthetic rules use (envs/README.md): one per rule family."""
    expected = {
        "data": "data-svm",
        "svm": "data-svm",
        "svm_geometry": "data-svm",
        "train": "train",
        "study_runs": "train",
        "aggregate": "plot",
        "figure": "plot",
        "claims": "plot",
        "study_summary": "plot",
    }
    assert {name: env_of(rules[name]).stem for name in expected} == expected


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_file_is_well_formed_and_its_pins_agree_with_the_project(path):
    assert pin_problems(read_env(path)) == []


def test_a_package_has_one_pin_across_envs():
    pins: dict[str, dict[str, str]] = {}
    for path in ENV_FILES:
        env = read_env(path)
        for name, version in [*env.conda.items(), *env.pip.items()]:
            pins.setdefault(name, {})[path.name] = version
    assert {n: v for n, v in pins.items() if len(set(v.values())) > 1} == {}


# ---- the checker fails where it should --------------------------------------------------

ENV_TEMPLATE = """\
name: attnbias-e
channels: [conda-forge]
dependencies:
  - python==3.11.7
  - numpy==2.4.6
  - pyarrow==26.0.1
{extra}  - pip==26.3
  - pip:
      - --editable ${{ATTNBIAS_ROOT}}
"""


def fabricated_workflow(root: Path, extra_deps: str = "") -> Path:
    """A two-rule workflow: `good` runs a script importing numpy, torch and attnbias.workflow.io
    (which imports pyarrow) in envs/e.yaml; `bare` runs it with no conda: at all."""
    (root / "workflow" / "rules").mkdir(parents=True)
    (root / "workflow" / "scripts").mkdir()
    (root / "envs").mkdir()
    (root / "Snakefile").write_text('include: "workflow/rules/x.smk"\n')
    (root / "workflow" / "rules" / "x.smk").write_text(
        'rule good:\n    output:\n        "a"\n    conda:\n        "../../envs/e.yaml"\n'
        '    script:\n        "../scripts/s.py"\n\n\n'
        'rule bare:\n    output:\n        "b"\n    script:\n        "../scripts/s.py"\n'
    )
    (root / "workflow" / "scripts" / "s.py").write_text(
        "import json\n\nimport numpy\n\nfrom attnbias import io\n\n\ndef f():\n"
        "    import torch  # a function-level import counts\n"
    )
    (root / "envs" / "e.yaml").write_text(ENV_TEMPLATE.format(extra=extra_deps))
    return root / "Snakefile"


def test_checker_flags_a_rule_without_env_and_an_undeclared_import(tmp_path):
    rules = load_rules(fabricated_workflow(tmp_path))
    envs = tmp_path / "envs"
    [bare] = rule_problems(rules["bare"], envs)
    assert "rule bare (x.smk): no conda: directive" in bare
    [good] = rule_problems(rules["good"], envs)  # numpy, pyarrow (via io) are declared
    assert "s.py imports torch, which e.yaml does not declare" in good and "pytorch" in good


def test_checker_passes_once_the_import_is_declared(tmp_path):
    rules = load_rules(fabricated_workflow(tmp_path, "  - pytorch==2.13.0\n"))
    assert rule_problems(rules["good"], tmp_path / "envs") == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("numpy==2.4.6", "numpy"), "'numpy' is not pinned"),
        (lambda t: t.replace("numpy==2.4.6", "numpy>=2"), "'numpy>=2' is not pinned"),
        (lambda t: t.replace("[conda-forge]", "[defaults]"), "must start with conda-forge"),
        (lambda t: t.replace("      - --editable ${ATTNBIAS_ROOT}\n", ""), "--editable"),
        (lambda t: t.replace("name: attnbias-e", "name: e"), "name must be attnbias-e"),
    ],
    ids=["unpinned", "range", "channel", "no-project", "name"],
)
def test_bad_env_files_are_rejected(tmp_path, edit, message):
    path = tmp_path / "e.yaml"
    path.write_text(edit(ENV_TEMPLATE.format(extra="")))
    with pytest.raises(EnvError, match=re.escape(message)):
        read_env(path)


def test_pins_outside_the_project_ranges_are_flagged(tmp_path):
    path = tmp_path / "e.yaml"
    extra = "  - pytorch==2.12.0\n  - pandas==3.0.0\n"
    path.write_text(ENV_TEMPLATE.format(extra=extra).replace("numpy==2.4.6", "numpy==1.25.0"))
    problems = "\n".join(pin_problems(read_env(path)))
    assert "numpy==1.25.0 is outside pyproject.toml's numpy>=2.0" in problems
    assert "pandas==3.0.0 is outside pyproject.toml's pandas<3,>=2.1" in problems
    assert "torch==2.12.0, but constraints.txt pins 2.13.0" in problems
