"""The deploy files as an operator (and Docker, Kubernetes) would read them; no container engine runs here.

Beyond "it parses": every environment variable they set is a real setting and passes `check-config`,
every probe and Service points at a port the container declares, the Redis configuration keeps games
(and a real redis-server started with it satisfies `thousand doctor`), the image is non-root and built
only from hash-locked dependencies that cover pyproject's runtime list.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from redis_server import RedisServer

from bot.ops.config import check_settings, load_settings, shard_ids
from bot.ops.doctor import Level, run_doctor
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
SETTING_NAMES = {name.upper() for name in Settings.model_fields}


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def k8s_documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def find(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for d in k8s_documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def redis_conf() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (DEPLOY / "redis.conf").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            out[key] = value.strip()
    return out


# --- redis.conf ---------------------------------------------------------------------------------------------


def test_redis_conf_keeps_every_game() -> None:
    conf = redis_conf()
    assert conf["appendonly"] == "yes"
    assert conf["appendfsync"] == "everysec"
    assert conf["maxmemory-policy"] == "noeviction"
    # The reason (every key expires, so volatile-* would evict live games) points at the key inventory.
    assert "Keys and their lifetimes" in (DEPLOY / "redis.conf").read_text()
    assert "### Keys and their lifetimes" in (ROOT / "docs" / "OPERATIONS.md").read_text()
    assert conf["dir"] == "/data"
    assert re.fullmatch(r"\d+[mg]b", conf["maxmemory"])


class ConfiguredRedis(RedisServer):
    """A test redis-server that reads `conf` first; the helper's flags would override the file's
    persistence settings, so only its port, bind, dir and logfile are kept."""

    def __init__(self, conf: Path, **options: Any) -> None:
        self.conf = conf
        super().__init__(**options)

    def command(self) -> list[str]:
        args = super().command()
        for flag in ("--appendonly", "--appendfsync", "--save"):
            i = args.index(flag)
            del args[i : i + 2]
        return [args[0], str(self.conf), *args[1:]]


def test_a_redis_server_run_with_redis_conf_passes_the_doctor(tmp_path: Path) -> None:
    # Redis changes to `dir` while parsing the file, before command-line options apply: leave it out.
    lines = (DEPLOY / "redis.conf").read_text().splitlines()
    conf = tmp_path / "redis.conf"
    conf.write_text("\n".join(line for line in lines if not line.startswith("dir ")) + "\n")
    with ConfiguredRedis(conf, data_dir=tmp_path) as server:
        report = run_doctor(server.url)
    assert report.exit_code == 0, report.to_text()
    worst = {f.check: f.level for f in report.findings}
    assert worst == {
        "version": Level.OK,
        "persistence": Level.OK,
        "eviction": Level.OK,
        "memory": Level.OK,
    }
    assert "appendonly yes, appendfsync everysec" in report.to_text()
    assert "of maxmemory 512 MB" in report.to_text()
    assert any(tmp_path.glob("appendonly*"))  # appendonly.aof (6.x) or appendonlydir/ (7.x)


# --- compose -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml(DEPLOY / "compose.yaml")
    return data


def test_compose_services_restart_and_report_health(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"redis", "telegram", "discord", "web"}
    for name, service in services.items():
        assert service["restart"] in ("unless-stopped", "always"), name
        assert service["healthcheck"]["test"], name
        assert service["stop_grace_period"] == "30s", name
    assert services["telegram"]["command"] == ["telegram"]
    assert services["discord"]["command"] == ["discord"]
    assert services["web"]["command"] == ["web"]


def test_compose_redis_uses_redis_conf_on_a_volume(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert redis["command"] == ["redis-server", "/usr/local/etc/redis/redis.conf"]
    mounts = dict(volume.split(":", 1) for volume in redis["volumes"])
    assert mounts["./redis.conf"] == "/usr/local/etc/redis/redis.conf:ro"
    assert (DEPLOY / "redis.conf").is_file()
    assert mounts["redis-data"] == redis_conf()["dir"]
    assert "redis-data" in compose["volumes"]
    assert "ports" not in redis  # reachable only from the bots
    assert re.fullmatch(r"redis:\d+\.\d+\.\d+(-\w+)?", redis["image"])


def test_compose_bots_wait_for_redis_and_point_at_it(compose: dict[str, Any]) -> None:
    for name in ("telegram", "discord", "web"):
        bot = compose["services"][name]
        assert bot["depends_on"]["redis"]["condition"] == "service_healthy"
        env = bot["environment"]
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert set(env) <= SETTING_NAMES
        assert bot["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        probe = " ".join(bot["healthcheck"]["test"])
        assert f":{env['METRICS_PORT']}/readyz" in probe
        assert bot["read_only"] is True and "/tmp" in bot["tmpfs"]
        assert float(env["DRAIN_SECONDS"]) < 30  # inside stop_grace_period
        assert bot["profiles"] == [name]
        assert all(port.startswith("127.0.0.1:") for port in bot["ports"])


def test_compose_env_example_names_real_settings() -> None:
    names = {
        line.split("=", 1)[0]
        for line in (DEPLOY / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    }
    assert names - {"COMPOSE_PROFILES"} <= SETTING_NAMES
    assert {"TELEGRAM_TOKEN", "DISCORD_TOKEN", "COMPOSE_PROFILES"} <= names
    assert ".env" in (DEPLOY / ".gitignore").read_text().split()


# --- Kubernetes ----------------------------------------------------------------------------------------


def workloads() -> Iterator[dict[str, Any]]:
    yield find("Deployment", "thousand-telegram")
    yield find("StatefulSet", "thousand-discord")


def test_every_manifest_is_well_formed_and_in_the_kustomization() -> None:
    kustomization = load_yaml(K8S / "kustomization.yaml")
    listed = set(kustomization["resources"])
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert listed == files
    for doc in k8s_documents():
        assert doc["apiVersion"] and doc["kind"] and doc["metadata"]["name"], doc
    names = [(d["kind"], d["metadata"]["name"]) for d in k8s_documents()]
    assert len(names) == len(set(names))
    assert {i["name"] for i in kustomization["images"]} == {
        c["image"] for w in workloads() for c in w["spec"]["template"]["spec"]["containers"]
    }


@pytest.mark.parametrize(
    "kind_name", [("Deployment", "thousand-telegram"), ("StatefulSet", "thousand-discord")]
)
def test_workloads_have_probes_resources_and_run_unprivileged(kind_name: tuple[str, str]) -> None:
    workload = find(*kind_name)
    spec = workload["spec"]
    pod = spec["template"]["spec"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    (container,) = pod["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    config = find("ConfigMap", "thousand-config")["data"]
    assert ports["metrics"] == int(config["METRICS_PORT"])
    assert container["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert container["startupProbe"]["httpGet"]["path"] == "/livez"
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert "memory" in container["resources"]["limits"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert {"/tmp"} == {m["mountPath"] for m in container["volumeMounts"]}
    # The grace period covers the drain (and the preStop pause where there is one).
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pause = int(pre_stop[1]) if pre_stop[:1] == ["sleep"] else 0
    assert pod["terminationGracePeriodSeconds"] >= float(config["DRAIN_SECONDS"]) + pause + 10
    refs = {s.get("configMapRef", s.get("secretRef", {})).get("name") for s in container["envFrom"]}
    assert refs == {"thousand-config", "thousand-secrets"}
    annotations = spec["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(ports["metrics"])


def test_telegram_webhook_replicas_behind_service_and_ingress() -> None:
    deployment = find("Deployment", "thousand-telegram")
    assert deployment["spec"]["replicas"] >= 2
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = find("Service", "thousand-telegram")
    assert service["spec"]["selector"].items() <= labels.items()
    container_ports = {p["name"] for p in deployment["spec"]["template"]["spec"]["containers"][0]["ports"]}
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= container_ports
    ingress = find("Ingress", "thousand-telegram")
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    assert backend["name"] == "thousand-telegram"
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    config = find("ConfigMap", "thousand-config")["data"]
    url = config["TELEGRAM_WEBHOOK_URL"]
    assert url == f"https://{rule['host']}{path['path']}"
    assert rule["host"] in ingress["spec"]["tls"][0]["hosts"]
    listen_port = int(config["TELEGRAM_WEBHOOK_LISTEN"].rsplit(":", 1)[1])
    assert listen_port == next(
        p["containerPort"]
        for p in deployment["spec"]["template"]["spec"]["containers"][0]["ports"]
        if p["name"] == "webhook"
    )
    pdb = find("PodDisruptionBudget", "thousand-telegram")
    assert pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]
    hpa = find("HorizontalPodAutoscaler", "thousand-telegram")
    assert hpa["spec"]["minReplicas"] == deployment["spec"]["replicas"]


def test_discord_shards_come_from_the_statefulset_ordinal() -> None:
    statefulset = find("StatefulSet", "thousand-discord")
    (container,) = statefulset["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    count = int(env["DISCORD_SHARD_COUNT"]["value"])
    assert count == statefulset["spec"]["replicas"]
    field = env["DISCORD_SHARD_IDS"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert field == "metadata.labels['apps.kubernetes.io/pod-index']"
    for ordinal in range(count):  # what each pod gets is a valid shard of the count
        assert shard_ids(str(ordinal), count) == (ordinal,)
    service = find("Service", "thousand-discord")
    assert statefulset["spec"]["serviceName"] == "thousand-discord"
    assert service["spec"]["clusterIP"] == "None"


def test_config_and_secret_keys_are_settings_and_pass_check_config(monkeypatch: pytest.MonkeyPatch) -> None:
    config = find("ConfigMap", "thousand-config")["data"]
    secret = find("Secret", "thousand-secrets")["stringData"]
    assert set(config) <= SETTING_NAMES
    assert set(secret) <= SETTING_NAMES
    assert not set(config) & {"TELEGRAM_TOKEN", "DISCORD_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "REDIS_URL"}
    for name, value in {**config, **secret}.items():
        monkeypatch.setenv(name, value)
    for platform in ("telegram", "discord"):
        monkeypatch.setenv("DISCORD_SHARD_COUNT", "2")
        monkeypatch.setenv("DISCORD_SHARD_IDS", "1")
        assert check_settings(load_settings(None), platform) == []
    redis_service = find("Service", "redis")
    assert secret["REDIS_URL"].split("@", 1)[1].startswith(f"{redis_service['metadata']['name']}:6379")


# --- where the probe listener binds ------------------------------------------------------------------


def test_probes_listen_on_loopback_unless_a_deploy_file_says_otherwise() -> None:
    """Outside a container, /metrics and /readyz answer only on this machine; every deploy file that
    runs the bot in a container sets the address its orchestrator needs, as a setting."""
    assert Settings.model_fields["metrics_host"].default == "127.0.0.1"
    compose = load_yaml(DEPLOY / "compose.yaml")
    for name in ("telegram", "discord"):
        assert compose["services"][name]["environment"]["METRICS_HOST"] == "0.0.0.0", name
    assert find("ConfigMap", "thousand-config")["data"]["METRICS_HOST"] == "0.0.0.0"
    for workload in workloads():
        (container,) = workload["spec"]["template"]["spec"]["containers"]
        refs = {s.get("configMapRef", {}).get("name") for s in container["envFrom"]}
        env = {e["name"] for e in container.get("env", [])}
        assert "thousand-config" in refs and "METRICS_HOST" not in env  # the ConfigMap's value applies
    env_lines = [line for line in dockerfile_lines() if line.startswith("ENV ")]
    assert any(re.search(r"\bMETRICS_HOST=0\.0\.0\.0\b", line) for line in env_lines)


# --- the image -----------------------------------------------------------------------------------------


def dockerfile_lines() -> list[str]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_dockerfile_is_multi_stage_pinned_and_unprivileged() -> None:
    lines = dockerfile_lines()
    (arg,) = [line for line in lines if line.startswith("ARG PYTHON_IMAGE=")]
    assert re.fullmatch(r"ARG PYTHON_IMAGE=python:3\.11\.\d+-slim-\w+", arg)
    stages = [line for line in lines if line.startswith("FROM ")]
    assert stages == ["FROM ${PYTHON_IMAGE} AS build", "FROM ${PYTHON_IMAGE} AS runtime"]
    runtime = lines[lines.index(stages[1]) :]
    (user,) = [line for line in runtime if line.startswith("USER ")]
    assert re.fullmatch(r"USER [1-9]\d*:[1-9]\d*", user)
    assert any(line.startswith("COPY --from=build /opt/thousand /opt/thousand") for line in runtime)
    assert not any(line.startswith(("RUN pip", "RUN apt-get")) for line in runtime)
    installs = [line for line in lines if "pip install" in line]
    assert any("--require-hashes" in line and "deploy/requirements.lock" in line for line in installs)
    assert any("--no-index" in line for line in installs)  # the project itself: nothing fetched
    assert 'ENTRYPOINT ["thousand"]' in lines
    assert "STOPSIGNAL SIGTERM" in lines
    assert any(line.startswith("HEALTHCHECK") and "/livez" in line for line in lines)
    copied = {line.split()[1] for line in lines if line.startswith("COPY ") and "--from" not in line}
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    for source in copied - {"deploy/requirements.lock"}:
        assert f"!{source}" in ignore or f"!{source}/**" in ignore, source


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_lock_pins_every_runtime_dependency_with_hashes() -> None:
    text = (DEPLOY / "requirements.lock").read_text()
    entries = re.findall(
        r"^([A-Za-z0-9_.-]+)==([^\s\\]+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", text, re.M
    )
    pinned = {_normalize(name) for name, _, _ in entries}
    requirement_lines = [line for line in text.splitlines() if re.match(r"^[A-Za-z0-9]", line)]
    assert len(requirement_lines) == len(entries)  # every requirement line is pinned and hashed
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_normalize(re.split(r"[\[<>=!~; ]", dep, maxsplit=1)[0]) for dep in project["dependencies"]}
    assert wanted <= pinned, wanted - pinned
    build = (DEPLOY / "build-requirements.lock").read_text()
    assert re.search(r"^setuptools==[\d.]+ \\\n\s+--hash=sha256:", build, re.M)


def test_operations_guide_lists_every_setting() -> None:
    guide = (ROOT / "docs" / "OPERATIONS.md").read_text()
    missing = [name for name in sorted(SETTING_NAMES) if f"| `{name}` |" not in guide]
    assert not missing, f"docs/OPERATIONS.md has no row for {missing}"
    for path in ("deploy/compose.yaml", "deploy/redis.conf", "deploy/Dockerfile", "deploy/k8s/"):
        assert path in guide
