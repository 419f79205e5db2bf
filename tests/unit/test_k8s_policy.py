"""The policy linter (checkov) finds nothing in the Kubernetes kit but the exceptions that
config/checkov.yaml lists, each with its reason."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.unit import k8s_kit
from tests.unit.k8s_kit import ROOT

CONFIG = ROOT / "config" / "checkov.yaml"


def checkov() -> str:
    found = shutil.which("checkov", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("checkov comes with the dev extra (pip install -e '.[dev]')")
    return found


def run_checkov(cwd: Path, config: Path = CONFIG) -> list[dict]:
    """checkov's JSON reports (it prints one or more documents back to back)."""
    done = subprocess.run(
        [checkov(), "--config-file", str(config), "--output", "json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )
    text, reports, at = done.stdout.strip(), [], 0
    assert text, done.stderr[-2000:]
    decoder = json.JSONDecoder()
    while at < len(text):
        report, at = decoder.raw_decode(text, at)
        reports.append(report)
        while at < len(text) and text[at].isspace():
            at += 1
    return reports


def failed_checks(reports: list[dict]) -> list[str]:
    return [
        f"{c['check_id']} {c['resource']} ({c['file_path']})"
        for report in reports
        for c in report["results"]["failed_checks"]
    ]


def test_the_kit_has_no_finding_beyond_the_explained_exceptions(tmp_path):
    # the config's `quiet` leaves the passed checks out: without it, they name each file
    loud = tmp_path / "checkov.yaml"
    loud.write_text(yaml.safe_dump({**yaml.safe_load(CONFIG.read_text()), "quiet": False}))
    reports = run_checkov(ROOT, loud)
    assert sum(r["summary"]["passed"] for r in reports) > 100, "checkov read the manifests"
    assert failed_checks(reports) == []
    # every manifest directory is scanned: each file with a pod was read (a Secret's one
    # check is skipped, and a skipped check is not reported)
    read = {
        c["file_path"].lstrip("/")
        for r in reports
        for kind in ("passed_checks", "failed_checks", "skipped_checks")
        for c in r["results"].get(kind, [])
    }
    checked = {
        str(path.relative_to(ROOT))
        for path in k8s_kit.manifest_files()
        if {"Deployment", "Job"} & set(_kinds(path))
    }
    assert "config/k8s-extras/migrate-job.yaml" in checked
    assert checked <= read, checked - read


def _kinds(path: Path) -> list[str]:
    return [d["kind"] for d in yaml.safe_load_all(path.read_text()) if d]


def test_every_exception_is_explained_next_to_it():
    lines = CONFIG.read_text().splitlines()
    skipped = yaml.safe_load(CONFIG.read_text())["skip-check"]
    assert skipped
    for check in skipped:
        (at,) = [n for n, line in enumerate(lines) if line.strip() == f"- {check}"]
        assert lines[at - 1].strip().startswith("#"), f"{check} is skipped without a reason"


def test_the_linter_finds_what_the_kit_fixed_once_it_is_undone(tmp_path):
    kit = tmp_path / "config" / "k8s"
    kit.mkdir(parents=True)
    text = (ROOT / "config" / "k8s" / "runner.yaml").read_text()
    undone = text.replace("automountServiceAccountToken: false", "")
    assert undone != text
    (kit / "runner.yaml").write_text(undone)
    (tmp_path / "config" / "k8s-extras").mkdir()
    found = [c.split()[0] for c in failed_checks(run_checkov(tmp_path))]
    assert "CKV_K8S_38" in found
