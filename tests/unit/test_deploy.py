"""The deployment files: Kubernetes manifests checked against Kubernetes' own schemas (kubernetes-validate, which
ships them: no network), HAProxy's config checked by HAProxy itself, and every file checked against the Dockerfile
it deploys (port, user, health check, build arguments), so that none of them can drift from the image.

Building the image and running the stack are not tests (minutes, and podman): the image check (the Dockerfile
built with podman, on a machine with no image registry, from a Debian stand-in for `python:3.11-slim`, then run and
asked for /_stcore/health) and `python -m benchmarks.load --compose deploy/compose.yaml` do that (deploy/README.md).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S_VERSIONS = ("1.30", "1.33")  # a release still common on managed clusters, and a recent one
HEALTH = "/_stcore/health"


def dockerfile() -> dict:
    """What the deployment files must agree with: the image's port, user id, health check and build arguments."""
    text = (ROOT / "Dockerfile").read_text()
    joined = text.replace("\\\n", " ")
    return {
        "port": int(re.search(r"^EXPOSE (\d+)$", text, re.M).group(1)),
        "uid": int(re.search(r"useradd .*--uid (\d+)", text).group(1)),
        "healthcheck": json.loads(re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", joined, re.M).group(1)),
        "args": set(re.findall(r"^ARG (\w+)", text, re.M)),
    }


def manifests() -> dict[str, dict]:
    docs = [doc for path in sorted((DEPLOY / "k8s").glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())]
    return {doc["kind"]: doc for doc in docs}


def haproxy_check(path: Path) -> subprocess.CompletedProcess:
    if shutil.which("haproxy") is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy; .ci/run installs it)")
    return subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True, timeout=30)


# --- Kubernetes ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_manifest_is_valid_for_kubernetes(version):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    found = manifests()
    assert set(found) == {"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler"}
    for kind, doc in found.items():
        assert kubernetes_validate.validate(doc, version, strict=True) == version, kind  # raises on any error


def test_the_validator_refuses_a_misspelt_field():
    """The check above is not vacuous: a probe under a wrong name, or a number where a string goes, is refused."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    deployment = manifests()["Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    for change in (lambda c: c.update(readinessProbes=c.pop("readinessProbe")), lambda c: c.update(image=1)):
        broken = copy.deepcopy(deployment)
        change(broken["spec"]["template"]["spec"]["containers"][0])
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)
    assert container["readinessProbe"]["httpGet"]["path"] == HEALTH


def test_manifests_fit_together_and_fit_the_image():
    image, m = dockerfile(), manifests()
    deployment, service, ingress, hpa = (m[k] for k in ("Deployment", "Service", "Ingress", "HorizontalPodAutoscaler"))
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    # the pods are the Service's, and it reaches the port the image listens on
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert ports[service["spec"]["ports"][0]["targetPort"]] == image["port"]
    # the Ingress sends to that Service and port, keeps a session on its pod by cookie, keeps websockets open
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[f"nginx.ingress.kubernetes.io/{timeout}"]) >= 3600
    # probes on Streamlit's health endpoint; the image's user; limits above requests
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": HEALTH, "port": "http"}
    assert pod["spec"]["securityContext"]["runAsUser"] == image["uid"]
    res = container["resources"]
    assert set(res["requests"]) == set(res["limits"]) == {"cpu", "memory"}
    assert gib(res["requests"]["memory"]) <= gib(res["limits"]["memory"])
    assert float(res["requests"]["cpu"]) <= float(res["limits"]["cpu"])
    # the autoscaler scales this Deployment, never below its replicas
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert hpa["spec"]["minReplicas"] == deployment["spec"]["replicas"] < hpa["spec"]["maxReplicas"]


def gib(quantity: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(Mi|Gi)", quantity).groups()
    return float(number) / (1024 if unit == "Mi" else 1)


# --- Compose and HAProxy ---------------------------------------------------------------------------------------

def test_compose_runs_the_image_behind_the_proxy_with_the_images_health_check():
    image = dockerfile()
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    app, proxy = compose["services"]["app"], compose["services"]["proxy"]
    assert (DEPLOY / app["build"]["context"] / "Dockerfile").is_file()
    assert set(app["build"]["args"]) <= image["args"] and "TORCH_INDEX" in image["args"]
    assert app["expose"] == [str(image["port"])]
    assert app["healthcheck"]["test"] == ["CMD", *image["healthcheck"]]  # the same check, written once more
    assert app["deploy"]["replicas"] >= 2
    source, target, _ = proxy["volumes"][0].split(":")
    assert (DEPLOY / source).resolve() == DEPLOY / "haproxy.cfg"
    assert target == "/usr/local/etc/haproxy/haproxy.cfg"  # where the official image reads it
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy"
    # HAProxy listens on the port compose publishes and sends to the app service on the image's port
    cfg = (DEPLOY / "haproxy.cfg").read_text()
    published = proxy["ports"][0].split(":")[-1]
    assert re.search(rf"^\s+bind :{published}$", cfg, re.M)
    assert re.search(rf"^\s+server-template \w+ \d+ app:{image['port']} ", cfg, re.M)
    assert re.search(rf"^\s+option httpchk GET {HEALTH}$", cfg, re.M)
    # the replicas are found by the engine's DNS, which the container's resolv.conf names (Docker's 127.0.0.11 is
    # not Podman's: aardvark-dns answers on the network's gateway)
    resolvers = re.search(r"^\s+server-template .* resolvers (\S+)", cfg, re.M).group(1)
    section = re.search(rf"^resolvers {resolvers}\n((?:\s+.*\n)+)", cfg, re.M).group(1).split()
    assert "parse-resolv-conf" in section and "nameserver" not in section


def test_haproxy_accepts_the_config():
    result = haproxy_check(DEPLOY / "haproxy.cfg")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_benchmarks_loopback_proxy_is_the_deployed_config_with_loopback_servers(tmp_path):
    """benchmarks.load --proxy measures deploy/haproxy.cfg itself: only the address and the servers differ."""
    from benchmarks.cluster import loopback_config

    deployed = (DEPLOY / "haproxy.cfg").read_text()
    text = loopback_config({"app1": 8651, "app2": 8652}, 8650)
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    assert "resolvers" not in code and "server-template" not in code and "127.0.0.11" not in code
    assert re.findall(r"^\s+bind (\S+)", text, re.M) == ["127.0.0.1:8650"]
    assert re.findall(r"^\s+server (\S+) (\S+) check cookie (\S+)$", text, re.M) == [
        ("app1", "127.0.0.1:8651", "app1"), ("app2", "127.0.0.1:8652", "app2")]
    kept = [line for line in deployed.splitlines() if re.match(r"\s+(cookie|option|timeout|balance|retries)", line)]
    assert kept and all(line in text.splitlines() for line in kept)
    with pytest.raises(ValueError, match="server-template"):
        loopback_config({"app1": 8651}, 8650, text=deployed.replace("server-template", "# server-template"))
    (tmp_path / "haproxy.cfg").write_text(text)
    result = haproxy_check(tmp_path / "haproxy.cfg")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_benchmark_predicts_haproxys_dynamic_cookies():
    """`--compose` tells which container holds a session by the cookie HAProxy gives it: XXH64 is checked against
    its published test vectors, the cookie against one HAProxy 2.6.12 (Debian) set for 127.0.0.1:8871, key mha-viz."""
    from benchmarks.cluster import dynamic_cookie, xxh64

    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1  # 39 bytes: the 32-byte lanes
    assert dynamic_cookie("mha-viz", "127.0.0.1", 8871) == "e27aaf3468118cde"
