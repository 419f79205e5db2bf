"""What every test of the suite shares: Hypothesis runs without its per-example deadline.

The suite asserts behaviour, never time (speed is `hive bench`'s). A deadline turned an
example that met a loaded machine into a failure: `make soak` failed once on
`test_edits_of_lines_round_trip` taking 264 ms against the 200 ms default while a second
suite ran beside it. The slow-generation health check is off for the same reason.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("hive", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hive")
