"""The settings reader passes over Kubernetes service-link variables, and only those: each
shape with the value Kubernetes gives it, beside its Service's _SERVICE_HOST."""

import pytest

from hive.settings import Settings, SettingsError, is_service_link
from tests.unit.k8s_kit import service_links

SERVICE = {
    "metadata": {"name": "hive-queen"},
    "spec": {"ports": [{"name": "http", "port": 8080}, {"name": "grpc-api", "port": 9090}]},
}
UDP_SERVICE = {
    "metadata": {"name": "hive-dns"},
    "spec": {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 9153, "protocol": "SCTP"}]},
}


def test_every_link_of_a_service_is_passed_over():
    links = service_links(SERVICE, "10.96.12.10")
    assert set(links) == {
        "HIVE_QUEEN_SERVICE_HOST",
        "HIVE_QUEEN_SERVICE_PORT",
        "HIVE_QUEEN_SERVICE_PORT_HTTP",
        "HIVE_QUEEN_SERVICE_PORT_GRPC_API",
        "HIVE_QUEEN_PORT",
        "HIVE_QUEEN_PORT_8080_TCP",
        "HIVE_QUEEN_PORT_8080_TCP_PROTO",
        "HIVE_QUEEN_PORT_8080_TCP_PORT",
        "HIVE_QUEEN_PORT_8080_TCP_ADDR",
        "HIVE_QUEEN_PORT_9090_TCP",
        "HIVE_QUEEN_PORT_9090_TCP_PROTO",
        "HIVE_QUEEN_PORT_9090_TCP_PORT",
        "HIVE_QUEEN_PORT_9090_TCP_ADDR",
    }
    for name in links:
        assert is_service_link(name, links), name
    Settings.from_env(links)


@pytest.mark.parametrize("cluster_ip", ["10.96.0.53", "fd00:10:96::35"])
def test_links_of_udp_sctp_and_ipv6_services_are_passed_over(cluster_ip):
    links = service_links(UDP_SERVICE, cluster_ip)
    assert links["HIVE_DNS_PORT_53_UDP_PROTO"] == "udp"
    Settings.from_env(links)


def test_a_service_named_hive_gives_links_that_are_passed_over():
    links = service_links({"metadata": {"name": "hive"}, "spec": SERVICE["spec"]}, "10.0.0.9")
    assert "HIVE_PORT_8080_TCP" in links
    Settings.from_env(links)


LINKS = service_links(SERVICE, "10.96.12.10")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        # a link's shape with a value Kubernetes never writes there
        ("HIVE_QUEEN_SERVICE_PORT", "http"),
        ("HIVE_QUEEN_SERVICE_PORT_HTTP", "08080"),
        ("HIVE_QUEEN_PORT", "8080"),
        ("HIVE_QUEEN_PORT", "http://10.96.12.10:8080"),
        ("HIVE_QUEEN_PORT_8080_TCP", "udp://10.96.12.10:8080"),
        ("HIVE_QUEEN_PORT_8080_TCP", "tcp://10.96.12.10:9090"),
        ("HIVE_QUEEN_PORT_8080_TCP", "tcp://queen:8080"),
        ("HIVE_QUEEN_PORT_8080_TCP_PROTO", "TCP"),
        ("HIVE_QUEEN_PORT_8080_TCP_PORT", "9090"),
        ("HIVE_QUEEN_PORT_8080_TCP_ADDR", "queen.internal"),
        ("HIVE_QUEEN_SERVICE_HOST", "queen.internal"),
        # a shape Kubernetes does not make
        ("HIVE_QUEEN_PORT_8080", "tcp://10.96.12.10:8080"),
        ("HIVE_QUEEN_PORT_8080_HTTP", "tcp://10.96.12.10:8080"),
        ("HIVE_QUEEN_PORT_8080_TCP_HOST", "10.96.12.10"),
        ("HIVE_QUEEN_SERVICE_ADDR", "10.96.12.10"),
        # a link's shape for a Service whose _SERVICE_HOST is not there
        ("HIVE_RUNNER_SERVICE_PORT", "8080"),
        ("HIVE_RUNNER_PORT", "tcp://10.96.12.11:8080"),
        # a real setting's typo that looks a little like a link
        ("HIVE_HTTP_PORT", "8080"),
    ],
)
def test_anything_else_under_hive_is_still_refused(name, value):
    env = {**LINKS, name: value}
    assert not is_service_link(name, env)
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)
    assert any(p.startswith(f"{name} is not a hive variable") for p in caught.value.problems)
