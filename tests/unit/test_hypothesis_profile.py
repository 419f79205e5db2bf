"""The suite's Hypothesis profile (tests/conftest.py) is loaded for every test."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def test_no_deadline_and_no_slow_health_check() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
