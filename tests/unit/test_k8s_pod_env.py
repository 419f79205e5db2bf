"""A pod of the Kubernetes kit starts: the settings reader accepts the environment the pod
really gets (the image's ENV, the manifests' env, the Secret, and the service-link
variables of every Service in config/k8s/), and still refuses a real typo beside them."""

import pytest

from hive.settings import Settings, SettingsError
from tests.unit import k8s_kit


def workload_ids() -> list[str]:
    return [w["metadata"]["name"] for w in k8s_kit.workloads()]


@pytest.fixture(params=workload_ids())
def workload(request: pytest.FixtureRequest) -> dict:
    (found,) = [w for w in k8s_kit.workloads() if w["metadata"]["name"] == request.param]
    return found


def test_the_kit_has_a_service_whose_links_carry_the_hive_prefix():
    links = k8s_kit.all_service_links(iter(["10.96.12.10", "10.96.12.11", "10.96.12.12"]))
    assert "HIVE_QUEEN_SERVICE_HOST" in links and "HIVE_QUEEN_PORT_8080_TCP" in links


def test_every_pod_spec_turns_service_links_off(workload):
    assert k8s_kit.pod_spec(workload)["enableServiceLinks"] is False


def test_the_settings_reader_starts_on_the_pods_environment_with_service_links_on(workload):
    env = k8s_kit.pod_environment(workload, service_links_on=True)
    assert "HIVE_QUEEN_PORT_8080_TCP_ADDR" in env
    settings = Settings.from_env(env)
    if workload["metadata"]["name"] == "hive-runner":
        assert settings.runner_name == env["HOSTNAME"]
        assert settings.worker_keys["HIVE_WORKER_KEY"] == "sk-test-key"


def test_the_settings_reader_starts_on_the_pods_environment_as_the_kit_sets_it(workload):
    env = k8s_kit.pod_environment(workload, service_links_on=False)
    assert not [name for name in env if "_SERVICE_HOST" in name and name.startswith("HIVE_")]
    Settings.from_env(env)


def test_a_typo_beside_the_service_links_is_still_refused(workload):
    env = k8s_kit.pod_environment(workload, service_links_on=True)
    env["HIVE_MAX_WORKER"] = "8"
    env["HIVE_QUEEN_PORT"] = "8080"  # a link's name, not a link's value
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)
    assert [p.split(" (")[0] for p in caught.value.problems] == [
        "HIVE_MAX_WORKER is not a hive variable",
        "HIVE_QUEEN_PORT is not a hive variable",
    ]


def test_the_example_secret_has_every_key_a_pod_requires():
    secret = k8s_kit.example_secret()
    for workload in k8s_kit.workloads():
        (container,) = k8s_kit.pod_spec(workload)["containers"]
        for entry in container.get("env", []):
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref and not ref.get("optional"):
                assert ref["key"] in secret, (workload["metadata"]["name"], ref["key"])
