"""Reading the Kubernetes kit in config/: its documents, its pod specs, and the environment
Kubernetes gives a pod built from them (tests only)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
APPLIED = ROOT / "config" / "k8s"  # what `kubectl apply -k config/k8s` applies
EXTRAS = ROOT / "config" / "k8s-extras"  # applied one by one, by choice
KUSTOMIZATION = "kustomization.yaml"  # config/k8s's list of its manifests, not one itself
WORKLOAD_KINDS = ("Deployment", "Job")


def manifest_files(*folders: Path) -> list[Path]:
    return [
        path
        for folder in folders or (APPLIED, EXTRAS)
        for path in sorted(folder.glob("*.yaml"))
        if path.name != KUSTOMIZATION
    ]


def documents(*folders: Path) -> list[dict[str, Any]]:
    found = []
    for path in manifest_files(*folders):
        found.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    return found


def of_kind(kind: str, *folders: Path) -> list[dict[str, Any]]:
    return [doc for doc in documents(*folders) if doc["kind"] == kind]


def workloads() -> list[dict[str, Any]]:
    return [doc for doc in documents() if doc["kind"] in WORKLOAD_KINDS]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def example_secret() -> dict[str, str]:
    (secret,) = of_kind("Secret", EXTRAS)
    data: dict[str, str] = secret["stringData"]
    return data


def image_env() -> dict[str, str]:
    """The ENV lines of the Dockerfile's final stage: every container starts with them."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    final = text[text.rindex("\nFROM ") :]
    env: dict[str, str] = {}
    for line in re.findall(r"^ENV (.+)$", final, re.M):
        env.update(dict(pair.split("=", 1) for pair in line.split()))
    env["PATH"] = env["PATH"].replace("$PATH", "/usr/local/bin:/usr/bin:/bin")
    return env


def env_variable_name(name: str) -> str:
    """How Kubernetes turns a Service or port name into a variable name."""
    return name.upper().replace("-", "_")


def service_links(service: dict[str, Any], cluster_ip: str) -> dict[str, str]:
    """The variables the kubelet gives a pod for one Service (with service links on), as
    Kubernetes' pkg/kubelet/envvars writes them."""
    prefix = env_variable_name(service["metadata"]["name"])
    ports = service["spec"]["ports"]
    host = f"[{cluster_ip}]" if ipaddress.ip_address(cluster_ip).version == 6 else cluster_ip
    env = {
        f"{prefix}_SERVICE_HOST": cluster_ip,
        f"{prefix}_SERVICE_PORT": str(ports[0]["port"]),
    }
    for index, port in enumerate(ports):
        number = port["port"]
        protocol = port.get("protocol", "TCP")
        address = f"{protocol.lower()}://{host}:{number}"
        if port.get("name"):
            env[f"{prefix}_SERVICE_PORT_{env_variable_name(port['name'])}"] = str(number)
        if index == 0:
            env[f"{prefix}_PORT"] = address
        base = f"{prefix}_PORT_{number}_{protocol.upper()}"
        env[base] = address
        env[f"{base}_PROTO"] = protocol.lower()
        env[f"{base}_PORT"] = str(number)
        env[f"{base}_ADDR"] = cluster_ip
    return env


def all_service_links(cluster_ips: Iterator[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for service in of_kind("Service"):
        env.update(service_links(service, next(cluster_ips)))
    return env


def container_env(container: dict[str, Any], secret: dict[str, str], pod_name: str) -> dict:
    """A container's `env` as the kubelet resolves it: literals, secretKeyRef from `secret`
    (an optional key that is absent is left out), fieldRef metadata.name."""
    env = {}
    for entry in container.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
            continue
        source = entry["valueFrom"]
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            assert ref["name"] == "hive", entry
            if ref["key"] not in secret:
                assert ref.get("optional"), f"{entry['name']}: {ref['key']} is not in the Secret"
                continue
            env[entry["name"]] = secret[ref["key"]]
        elif "fieldRef" in source:
            assert source["fieldRef"]["fieldPath"] == "metadata.name", entry
            env[entry["name"]] = pod_name
        else:
            raise AssertionError(f"{entry['name']}: an env source the test does not know")
    return env


def pod_environment(workload: dict[str, Any], *, service_links_on: bool) -> dict[str, str]:
    """Everything the hive's process sees in a pod of `workload`: the image's ENV, the
    kubelet's own variables, the Service links (only when the pod has them on, or when
    `service_links_on` forces them, as for a pod spec that leaves them on), the container's
    env with the example Secret's values."""
    secret = {**example_secret(), "worker-key": "sk-test-key"}
    (container,) = pod_spec(workload)["containers"]
    pod_name = f"{workload['metadata']['name']}-7d9c8b6f5-x2x9q"
    env = {
        **image_env(),
        "HOSTNAME": pod_name,
        "KUBERNETES_SERVICE_HOST": "10.96.0.1",
        "KUBERNETES_SERVICE_PORT": "443",
        "KUBERNETES_SERVICE_PORT_HTTPS": "443",
        "KUBERNETES_PORT": "tcp://10.96.0.1:443",
    }
    if service_links_on or pod_spec(workload).get("enableServiceLinks", True):
        env.update(all_service_links(iter(f"10.96.12.{n}" for n in range(10, 250))))
    env.update(container_env(container, secret, pod_name))
    return env
