"""The Kubernetes manifests against the API's own schemas, offline (kubernetes-validate)."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest

from tests.deploy.manifests import K8S, documents, k8s_manifests

# The oldest Kubernetes the manifests promise (the PodDisruptionBudget's
# unhealthyPodEvictionPolicy is GA from 1.31) and the newest the package ships schemas for.
VERSIONS = ("1.31", kubernetes_validate.latest_version())

# Custom resources the package has no schema for, each checked another way or installed
# by its operator, which validates it on apply (deploy/README.md).
CUSTOM_KINDS = {
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"): "test_kustomization_*",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "test_the_service_monitor_*",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "promtool (test_alerts.py)",
    ("kafka.strimzi.io/v1", "Kafka"): "the Strimzi operator's CRD schema, on apply",
    ("kafka.strimzi.io/v1", "KafkaNodePool"): "the Strimzi operator's CRD schema, on apply",
}

MANIFESTS = [
    pytest.param(doc, id=f"{path.relative_to(K8S)}#{index}:{doc.get('kind')}")
    for path, index, doc in k8s_manifests()
]


def validate(manifest: dict[str, Any], version: str) -> None:
    """Strict: an unknown field (a misspelt key) fails as much as a wrong type."""
    kubernetes_validate.validate(manifest, version, strict=True)


@pytest.mark.parametrize("manifest", MANIFESTS)
@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_is_valid_for_kubernetes(manifest: dict[str, Any], version: str) -> None:
    assert {"apiVersion", "kind"} <= manifest.keys()
    if (manifest["apiVersion"], manifest["kind"]) in CUSTOM_KINDS:
        with pytest.raises(kubernetes_validate.SchemaNotFoundError):
            validate(manifest, version)
        return
    validate(manifest, version)


def _statefulset() -> dict[str, Any]:
    (worker,) = documents(K8S / "worker-statefulset.yaml")
    return worker


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(lambda m: m["spec"].update(replicas="three"), id="wrong type"),
        pytest.param(
            lambda m: m["spec"]["template"]["spec"].update(terminationGracePeriod=90),
            id="misspelt field",
        ),
        pytest.param(lambda m: m["spec"].pop("selector"), id="missing required field"),
        pytest.param(
            lambda m: m["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(
                containerPort="metrics"
            ),
            id="port name for number",
        ),
    ],
)
def test_a_broken_copy_of_a_manifest_fails(breakage: Any) -> None:
    broken = copy.deepcopy(_statefulset())
    breakage(broken)
    for version in VERSIONS:
        validate(_statefulset(), version)  # the original passes, so the breakage is the cause
        with pytest.raises(kubernetes_validate.ValidationError):
            validate(broken, version)


def test_every_custom_kind_is_accounted_for() -> None:
    kinds = {(doc["apiVersion"], doc["kind"]) for _, _, doc in k8s_manifests()}
    assert set(CUSTOM_KINDS) <= kinds, "a custom kind listed here no longer exists"


def test_kustomization_lists_existing_manifests_of_the_namespace() -> None:
    (kustomization,) = documents(K8S / "kustomization.yaml")
    listed = {K8S / name for name in kustomization["resources"]}
    assert all(path.is_file() for path in listed), listed
    # Out on purpose: a Secret from git (secret.example.yaml says why), the CRD-based
    # monitoring and Kafka (their operators must exist first).
    outside = {K8S / "secret.example.yaml", *K8S.glob("monitoring/*"), *K8S.glob("kafka/*")}
    top_level = {path for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml"}
    assert top_level - outside == listed


def _by_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for _, _, doc in k8s_manifests() if doc["kind"] == kind]


def test_the_service_monitor_selects_a_service_with_its_port() -> None:
    (monitor,) = _by_kind("ServiceMonitor")
    wanted = monitor["spec"]["selector"]["matchLabels"]
    services = [
        s for s in _by_kind("Service") if wanted.items() <= s["metadata"].get("labels", {}).items()
    ]
    assert services, f"no Service carries {wanted}"
    ports = {p["name"] for s in services for p in s["spec"]["ports"]}
    assert {e["port"] for e in monitor["spec"]["endpoints"]} <= ports


def _pod_specs() -> list[dict[str, Any]]:
    specs = [
        d["spec"]["template"]["spec"]
        for k in ("StatefulSet", "Deployment", "Job")
        for d in _by_kind(k)
    ]
    specs += [d["spec"]["jobTemplate"]["spec"]["template"]["spec"] for d in _by_kind("CronJob")]
    return specs


def test_every_pod_reads_the_config_map_and_secret_that_exist() -> None:
    config_maps = {d["metadata"]["name"] for d in _by_kind("ConfigMap")}
    secrets = {d["metadata"]["name"] for d in _by_kind("Secret")}
    for spec in _pod_specs():
        for container in spec["containers"]:
            sources = container.get("envFrom", [])
            assert {"configMapRef": {"name": "slotwise-config"}} in sources, container["name"]
            for source in sources:
                if "configMapRef" in source:
                    assert source["configMapRef"]["name"] in config_maps
                if "secretRef" in source:
                    assert source["secretRef"]["name"] in secrets


def test_every_service_selects_pods_that_exist_and_targets_their_ports() -> None:
    pods = [
        (d["spec"]["template"]["metadata"]["labels"], d["spec"]["template"]["spec"])
        for k in ("StatefulSet", "Deployment")
        for d in _by_kind(k)
    ]
    for service in _by_kind("Service"):
        selected = [
            spec for labels, spec in pods if service["spec"]["selector"].items() <= labels.items()
        ]
        assert selected, service["metadata"]["name"]
        named = {p["name"] for spec in selected for c in spec["containers"] for p in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= named
