"""The Kubernetes kit holds on a real cluster: every manifest is valid against the
Kubernetes JSON schemas, and each pod carries what a platform engineer checks for."""

import kubernetes_validate
import pytest
import yaml

from hive.metrics.scraped import QUEUE_METRICS
from tests.unit import k8s_kit

# the oldest Kubernetes still commonly run (unhealthyPodEvictionPolicy is GA from 1.31;
# 1.30 serves it as beta) and the newest the validator knows
VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
HAND_BACK_AND_EXIT_SECONDS = 25


def core_documents() -> list[dict]:
    """The documents of Kubernetes' own kinds (KEDA's and the Prometheus operator's are
    custom resources, which the schemas do not know)."""
    custom = ("keda.sh", "monitoring.coreos.com")
    return [d for d in k8s_kit.documents() if not d["apiVersion"].startswith(custom)]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_is_valid_against_the_kubernetes_schemas(version):
    documents = core_documents()
    assert len(documents) >= 8
    for doc in documents:
        # strict: a misspelt field (enableServiceLink) is an error, not ignored
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_catches_a_misspelt_field():
    (queen,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == "hive-queen"]
    k8s_kit.pod_spec(queen)["enableServiceLink"] = False
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(queen, VERSIONS[-1], strict=True)


def test_applying_config_k8s_never_overwrites_the_real_secret():
    applied = k8s_kit.documents(k8s_kit.APPLIED)
    assert not [d for d in applied if d["kind"] == "Secret"]
    for path in k8s_kit.APPLIED.glob("*.yaml"):
        assert "CHANGE-ME" not in path.read_text(), path.name
    # nothing but manifests and their kustomization (`kubectl apply -k`)
    assert not list(k8s_kit.APPLIED.glob("*.yml")) and not list(k8s_kit.APPLIED.glob("*.json"))
    assert {d["kind"] for d in applied} == {
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "ServiceAccount",
    }


@pytest.fixture(params=["hive-queen", "hive-runner", "hive-migrate"])
def workload(request: pytest.FixtureRequest) -> dict:
    (found,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == request.param]
    return found


def test_pods_run_under_the_runtime_default_seccomp_profile_without_a_token(workload):
    spec = k8s_kit.pod_spec(workload)
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["automountServiceAccountToken"] is False
    assert spec["enableServiceLinks"] is False
    (container,) = spec["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False


@pytest.mark.parametrize("name", ["hive-queen", "hive-runner"])
def test_home_is_a_writable_volume(name):
    (deployment,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == name]
    spec = k8s_kit.pod_spec(deployment)
    (container,) = spec["containers"]
    home = k8s_kit.container_env(container, k8s_kit.example_secret(), "pod")["HOME"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert home in mounts
    (volume,) = [v for v in spec["volumes"] if v["name"] == mounts[home]]
    assert "emptyDir" in volume


@pytest.mark.parametrize("name", ["hive-queen", "hive-runner"])
def test_a_slow_first_clone_is_covered_by_a_startup_probe(name):
    (deployment,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == name]
    (container,) = k8s_kit.pod_spec(deployment)["containers"]
    startup = container["startupProbe"]
    assert startup["httpGet"]["path"] == "/healthz"
    # `hive serve` clones before it serves /healthz: ten minutes before liveness counts
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 600


@pytest.mark.parametrize("name", ["hive-queen", "hive-runner"])
def test_the_grace_period_covers_the_pre_stop_pause_and_the_drain(name):
    (deployment,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == name]
    spec = k8s_kit.pod_spec(deployment)
    (container,) = spec["containers"]
    env = k8s_kit.container_env(container, k8s_kit.example_secret(), "pod")
    pre_stop = container.get("lifecycle", {}).get("preStop")
    pause = int(pre_stop["exec"]["command"][-1]) if pre_stop else 0
    grace = spec["terminationGracePeriodSeconds"]
    # the pause comes out of the grace period: what is left after SIGTERM is told
    assert int(env["HIVE_PLATFORM_DRAIN_SECONDS"]) == grace - pause
    assert grace - pause > int(env["HIVE_RUNNER_DRAIN_SECONDS"]) + HAND_BACK_AND_EXIT_SECONDS


def test_the_queen_behind_its_service_pauses_before_sigterm():
    (deployment,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == "hive-queen"]
    (container,) = k8s_kit.pod_spec(deployment)["containers"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep" and 3 <= int(command[1]) <= 15
    (service,) = k8s_kit.of_kind("Service")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


@pytest.mark.parametrize("name", ["hive-queen", "hive-runner"])
def test_a_disruption_budget_lets_one_pod_go_at_a_time(name):
    (deployment,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == name]
    (budget,) = [b for b in k8s_kit.of_kind("PodDisruptionBudget") if b["metadata"]["name"] == name]
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    assert budget["spec"]["maxUnavailable"] == 1
    # a budget of one on one replica would block every node drain
    assert deployment["spec"]["replicas"] >= 2


def test_the_migrate_job_runs_hive_migrate_once_and_goes():
    (job,) = k8s_kit.of_kind("Job")
    spec = k8s_kit.pod_spec(job)
    (container,) = spec["containers"]
    assert container["args"] == ["migrate"]
    assert spec["restartPolicy"] == "Never"
    assert job["spec"]["ttlSecondsAfterFinished"] > 0
    (queen,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == "hive-queen"]
    assert container["image"] == k8s_kit.pod_spec(queen)["containers"][0]["image"]


def test_the_keda_example_scales_the_runners_on_the_queue():
    (scaled,) = k8s_kit.of_kind("ScaledObject", k8s_kit.EXTRAS)
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["spec"]["scaleTargetRef"]["name"] == "hive-runner"
    assert 1 <= scaled["spec"]["minReplicaCount"] < scaled["spec"]["maxReplicaCount"]
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "prometheus"
    query = trigger["metadata"]["query"]
    assert "hive_orders_queued" in query and "hive_orders_queued" in QUEUE_METRICS
    # a store blip keeps the last queue depth (promtool-tested in alerts.test.yml), an
    # empty answer is an error, and KEDA's fallback then holds runners
    tests = yaml.safe_load((k8s_kit.ROOT / "config/prometheus/alerts.test.yml").read_text())
    tested = {e["expr"] for t in tests["tests"] for e in t.get("promql_expr_test", [])}
    assert query in tested and "last_over_time(hive_orders_queued[" in query
    assert trigger["metadata"]["ignoreNullValues"] == "false"
    assert scaled["spec"]["fallback"]["replicas"] >= scaled["spec"]["minReplicaCount"]
    # busy runners count too: the queue alone would scale down the runners holding orders
    assert "hive_bees_running" in query
    assert float(trigger["metadata"]["threshold"]) > 0
