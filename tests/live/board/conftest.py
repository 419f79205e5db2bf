from tests.live.surface.conftest import serve, world  # noqa: F401  (the same world)
