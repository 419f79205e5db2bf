"""What an operator expects of the Kubernetes kit beyond a valid pod (issue 30): `kubectl
apply -k` applies every manifest, the pods run under ServiceAccounts of their own, egress
is denied but for the database, DNS and HTTPS, every emptyDir and container has its disk
bounded, two Queens never share a node, the autoscaler leaves a draining runner's node
alone, and the Prometheus operator's monitors scrape what the alerts and dashboard read."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.unit import k8s_kit

DEPLOY_DOC = k8s_kit.ROOT / "docs" / "deploy.md"


def workload(name: str) -> dict:
    (found,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == name]
    return found


def test_the_kustomization_lists_every_manifest_of_config_k8s():
    kustomization = yaml.safe_load((k8s_kit.APPLIED / k8s_kit.KUSTOMIZATION).read_text())
    assert kustomization["kind"] == "Kustomization"
    files = {p.name for p in k8s_kit.manifest_files(k8s_kit.APPLIED)}
    assert set(kustomization["resources"]) == files
    assert len(kustomization["resources"]) == len(files)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_kustomize_renders_the_whole_kit():
    done = subprocess.run(
        ["kubectl", "kustomize", str(k8s_kit.APPLIED)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rendered = [d for d in yaml.safe_load_all(done.stdout) if d]
    named = lambda docs: sorted((d["kind"], d["metadata"]["name"]) for d in docs)  # noqa: E731
    assert named(rendered) == named(k8s_kit.documents(k8s_kit.APPLIED))


@pytest.mark.parametrize("name", ["hive-queen", "hive-runner", "hive-migrate"])
def test_each_pod_runs_under_a_service_account_of_the_kit_without_a_token(name):
    spec = k8s_kit.pod_spec(workload(name))
    accounts = {a["metadata"]["name"]: a for a in k8s_kit.of_kind("ServiceAccount")}
    account = accounts[spec["serviceAccountName"]]
    assert account["automountServiceAccountToken"] is False
    assert spec["automountServiceAccountToken"] is False


def egress_policy() -> dict:
    (policy,) = [
        p for p in k8s_kit.of_kind("NetworkPolicy") if "Egress" in p["spec"]["policyTypes"]
    ]
    return policy


def test_egress_is_denied_but_for_dns_the_database_and_https():
    policy = egress_policy()
    assert policy["spec"]["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "hive"}}
    allowed = set()
    for rule in policy["spec"]["egress"]:
        assert rule.get("ports"), "a rule without ports would allow every port"
        allowed |= {(p["port"], p["protocol"]) for p in rule["ports"]}
    assert allowed == {(53, "UDP"), (53, "TCP"), (5432, "TCP"), (6432, "TCP"), (443, "TCP")}
    (https,) = [r for r in policy["spec"]["egress"] if r["ports"][0]["port"] == 443]
    blocks = [t["ipBlock"] for t in https["to"]]
    assert {"169.254.169.254/32"} <= {e for b in blocks for e in b.get("except", [])}
    text = DEPLOY_DOC.read_text()
    assert "## Egress" in text and "egress.yaml" in text


@pytest.mark.parametrize("name", ["hive-queen", "hive-runner", "hive-migrate"])
def test_every_empty_dir_and_container_has_its_disk_bounded(name):
    spec = k8s_kit.pod_spec(workload(name))
    sizes = []
    for volume in spec["volumes"]:
        if "emptyDir" in volume:
            assert "sizeLimit" in volume["emptyDir"], (name, volume["name"])
            sizes.append(_bytes(volume["emptyDir"]["sizeLimit"]))
    (container,) = spec["containers"]
    resources = container["resources"]
    request = _bytes(resources["requests"]["ephemeral-storage"])
    limit = _bytes(resources["limits"]["ephemeral-storage"])
    # the volumes fill before the container's limit: the volume that is full evicts
    assert 0 < request <= limit and sum(sizes) <= limit


def _bytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMGT]i)?", quantity).groups()  # type: ignore[union-attr]
    return int(number) * 1024 ** ("  KiMiGiTi".index(unit) // 2 if unit else 0)


def test_two_queens_never_share_a_node():
    queen = workload("hive-queen")
    spec = k8s_kit.pod_spec(queen)
    labels = queen["spec"]["selector"]["matchLabels"]
    (spread,) = spec["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname"
    assert (spread["maxSkew"], spread["whenUnsatisfiable"]) == (1, "DoNotSchedule")
    assert spread["labelSelector"]["matchLabels"] == labels
    assert queen["spec"]["replicas"] >= 2


def test_the_autoscaler_may_not_cut_a_runner_s_drain():
    runner = workload("hive-runner")
    annotations = runner["spec"]["template"]["metadata"]["annotations"]
    assert annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
    # the autoscaler's ceiling is below the drain, which is why the annotation is there
    assert k8s_kit.pod_spec(runner)["terminationGracePeriodSeconds"] > 600
    text = DEPLOY_DOC.read_text()
    assert "cluster-autoscaler.kubernetes.io/safe-to-evict" in text
    assert "600 s" in text and "--max-graceful-termination-sec" in text


def test_the_monitors_scrape_every_pod_under_the_jobs_the_alerts_read():
    (pods,) = k8s_kit.of_kind("PodMonitor", k8s_kit.EXTRAS)
    (services,) = k8s_kit.of_kind("ServiceMonitor", k8s_kit.EXTRAS)
    for monitor in (pods, services):
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    (endpoint,) = pods["spec"]["podMetricsEndpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics")
    assert pods["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/name": "hive"}
    (job,) = [r for r in endpoint["relabelings"] if r["targetLabel"] == "job"]
    components = {
        w["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        for w in k8s_kit.workloads()
        if w["kind"] == "Deployment"
    }
    jobs = {job["replacement"].replace("$1", c) for c in components}
    scrape = yaml.safe_load((k8s_kit.ROOT / "config" / "prometheus.yml").read_text())
    assert jobs == {c["job_name"] for c in scrape["scrape_configs"]}
    alerts = (k8s_kit.ROOT / "config" / "prometheus" / "alerts.yml").read_text()
    assert all(j in alerts for j in jobs)  # HiveDown's up{job=~...}
    (endpoint,) = services["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["relabelings"][0]["replacement"]) == ("http", "hive-queen")
    queen_service = k8s_kit.of_kind("Service")[0]
    assert services["spec"]["selector"]["matchLabels"] == queen_service["spec"]["selector"]
