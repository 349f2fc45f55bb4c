"""The k8s ConfigMap and the compose environments against the settings the code reads.

The names come from Settings' own fields (env prefix + field name, or the alias), so a
setting added to the code fails here until the ConfigMap lists it or says, in a comment,
why it is not set there.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from slotwise.streams import config
from slotwise.streams.config import Settings
from tests.deploy.manifests import COMPOSE_FILES, K8S, documents, setting_env_names

CONFIGMAP = K8S / "configmap.yaml"
_NAME = re.compile(r"\bSLOTWISE_[A-Z0-9_]+\b")


def _read() -> set[str]:
    """Every variable of every settings group the config module defines: Settings and the
    groups it composes, and those read beside it (forgetting's SLOTWISE_FORGET_*)."""
    groups = [
        value
        for value in vars(config).values()
        if isinstance(value, type)
        and issubclass(value, BaseSettings)
        and value.__module__ == config.__name__
    ]
    assert Settings in groups
    return {name for group in groups for name in setting_env_names(group)}


def _data() -> dict[str, str]:
    (config_map,) = documents(CONFIGMAP)
    data: dict[str, str] = config_map["data"]
    return data


def _commented() -> set[str]:
    """The names the ConfigMap's comments mention: each deliberately left out, with why."""
    comments = (line.split("#", 1)[1] for line in CONFIGMAP.read_text().splitlines() if "#" in line)
    return {name for comment in comments for name in _NAME.findall(comment)}


def test_every_setting_is_listed_or_deliberately_left_out() -> None:
    settings = _read()
    assert "SLOTWISE_KAFKA_BOOTSTRAP" in settings  # the names are read as the code reads them
    missing = settings - _data().keys() - _commented()
    assert not missing, f"settings neither in {CONFIGMAP.name} nor explained in its comments"


def test_the_config_map_sets_only_settings_that_exist() -> None:
    assert set(_data()) - _read() == set()


def test_a_comment_only_excuses_a_setting_that_exists() -> None:
    stale = _commented() - _read()
    assert not stale, f"{CONFIGMAP.name} explains settings the code no longer has"


def test_the_config_map_values_are_valid_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _read():
        monkeypatch.delenv(name, raising=False)
    for name, value in _data().items():
        assert isinstance(value, str), f"{name}: a ConfigMap value must be a string"
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.partitions == int(_data()["SLOTWISE_PARTITIONS"])
    assert config.ForgetSettings().threshold == float(_data()["SLOTWISE_FORGET_THRESHOLD"])


def _compose_envs() -> list[Any]:
    found = []
    for path in COMPOSE_FILES:
        (project,) = documents(path)
        for name, service in project["services"].items():
            if "build" in service:
                found.append(pytest.param(service["environment"], id=f"{path.name}:{name}"))
    return found


@pytest.mark.parametrize("environment", _compose_envs())
def test_compose_sets_only_settings_that_exist(environment: dict[str, object]) -> None:
    assert set(environment) - _read() == set()


# ------------------------------------------------------ the names, however Settings is split


class _Kafka(BaseModel):
    bootstrap: str = "b"


class _Redis(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLOTWISE_REDIS_")
    url: str = "u"


class _Nested(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLOTWISE_", env_nested_delimiter="__")
    kafka: _Kafka = _Kafka()
    partitions: int = 1
    token: str = Field("t", alias="SLOTWISE_API_TOKEN")


class _Grouped(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLOTWISE_")
    redis: _Redis = Field(default_factory=_Redis)
    top_k: int = 5


def test_the_names_follow_nested_groups_and_aliases() -> None:
    assert setting_env_names(_Nested) == {
        "SLOTWISE_KAFKA__BOOTSTRAP",
        "SLOTWISE_PARTITIONS",
        "SLOTWISE_API_TOKEN",
    }
    assert setting_env_names(_Grouped) == {"SLOTWISE_REDIS_URL", "SLOTWISE_TOP_K"}
