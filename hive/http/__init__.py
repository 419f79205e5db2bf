"""The hive's HTTP surface: probes, metrics, exports and the small API (DESIGN 8)."""

from hive.http.server import ExportServer, HttpConfig, check_config
from hive.http.surface import Surface, store_probe, store_surface

__all__ = ["ExportServer", "HttpConfig", "Surface", "check_config", "store_probe", "store_surface"]
