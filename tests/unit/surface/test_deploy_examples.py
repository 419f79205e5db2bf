"""The Kubernetes, Prometheus and Docker examples say what DESIGN 8 and the drain card say."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hive.http import ExportServer, HttpConfig, Surface
from hive.metrics import HiveMetrics
from hive.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
SECRET_VARIABLES = {"HIVE_DATABASE_URL", "HIVE_API_TOKEN", "HIVE_WORKER_KEY", "HIVE_WORKER_KEY_2"}


def load_yaml(text: str) -> list:
    # PyYAML comes with the dev tools (libcst, for mutmut), not with the hive
    yaml = pytest.importorskip("yaml")
    return list(yaml.safe_load_all(text))


def deployments() -> dict[str, dict]:
    found = {}
    for path in sorted((ROOT / "config" / "k8s").glob("*.yaml")):
        for doc in load_yaml(path.read_text()):
            if doc and doc["kind"] == "Deployment":
                found[doc["metadata"]["labels"]["app.kubernetes.io/component"]] = doc
    return found


def container(deployment: dict) -> dict:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def literal_env(deployment: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container(deployment)["env"] if "value" in e}


def test_there_is_a_queen_and_a_replicated_runner_deployment():
    found = deployments()
    assert set(found) == {"queen", "runner"}
    assert found["runner"]["spec"]["replicas"] > 1
    assert literal_env(found["queen"])["HIVE_ROLE"] == "queen"
    assert literal_env(found["runner"])["HIVE_ROLE"] == "runner"


# The grace period against the drain cap and the preStop pause: tests/unit/test_k8s_manifests.py


@pytest.mark.parametrize("component", ["queen", "runner"])
def test_probes_ask_readyz_and_healthz(component):
    spec = container(deployments()[component])
    assert spec["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert spec["livenessProbe"]["httpGet"]["path"] == "/healthz"


@pytest.mark.parametrize("component", ["queen", "runner"])
def test_secrets_come_from_a_secret_and_every_literal_is_a_valid_setting(component):
    env = container(deployments()[component])["env"]
    for entry in env:
        if entry["name"] in SECRET_VARIABLES:
            assert "secretKeyRef" in entry["valueFrom"], entry["name"]
    literals = literal_env(deployments()[component])
    assert not SECRET_VARIABLES & set(literals)
    # a misspelt or out-of-range variable in the example would fail here, all at once
    Settings.from_env({**literals, "HIVE_API_TOKEN": "t"})


def test_prometheus_scrapes_both_components():
    (config,) = load_yaml((ROOT / "config" / "prometheus.yml").read_text())
    kept = set()
    for job in config["scrape_configs"]:
        assert job["metrics_path"] == "/metrics"
        for rule in job["relabel_configs"]:
            if rule.get("action") == "keep" and rule["source_labels"][0].endswith("component"):
                kept.add(rule["regex"])
    assert kept == {"queen", "runner"}


def test_the_dockerfile_runs_hive_serve_as_non_root_with_a_health_check():
    text = (ROOT / "Dockerfile").read_text()
    final_stage = text[text.rindex("\nFROM ") :]
    user = re.search(r"^USER (\S+)", final_stage, re.M)
    assert user and user.group(1).split(":")[0] not in ("0", "root")
    assert "STOPSIGNAL SIGTERM" in final_stage
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", final_stage, re.M)
    entry = re.search(r"^ENTRYPOINT (.+)$", final_stage, re.M)
    assert entry, "no ENTRYPOINT"
    assert json.loads(entry.group(1))[-1] == "hive", "exec form, so signals reach the process"
    command = re.search(r"^CMD (.+)$", final_stage, re.M)
    assert command and json.loads(command.group(1)) == ["serve"]
    assert "git" not in re.findall(r"apt-get install[^&]*", final_stage)[0].split()


def healthcheck_command() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    found = re.search(r"^HEALTHCHECK .*?CMD (\[.*\])\s*$", text, re.M)
    assert found, "no exec-form HEALTHCHECK"
    return list(json.loads(found.group(1)))


def test_the_image_health_check_passes_on_a_live_server_and_fails_on_a_dead_one():
    server = ExportServer(HttpConfig(port=0), Surface(registry=HiveMetrics().registry))
    server.start()
    command = [sys.executable, *healthcheck_command()[1:]]
    env = {"PATH": os.environ.get("PATH", ""), "HIVE_HTTP_ADDR": f"0.0.0.0:{server.port}"}
    try:
        alive = subprocess.run(command, env=env, capture_output=True, timeout=30)
    finally:
        server.stop()
    dead = subprocess.run(command, env=env, capture_output=True, timeout=30)
    assert alive.returncode == 0, alive.stderr
    assert dead.returncode != 0
