"""`ServiceActor`: an object with `start()` and `stop()` (the HTTP server) as a child of
the tree. The tree hands it the object, so no actor imports the HTTP server."""

from __future__ import annotations

from typing import Protocol

from supervisors import SupervisedActor


class Service(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class ServiceActor(SupervisedActor):
    """`on_start` starts the service (a raise fails the tree's start, as a port in use
    should); `on_stop` stops it. Both are the service's own, safe twice."""

    def __init__(self, service: Service) -> None:
        super().__init__()
        self.service = service

    def on_start(self) -> None:
        self.service.start()

    def on_stop(self) -> None:
        self.service.stop()
