"""The hive's HTTP surface: probes, metrics, exports and the small API (DESIGN 8)."""

from hive.http.server import ExportServer, HttpConfig, Surface, check_config, store_probe

__all__ = ["ExportServer", "HttpConfig", "Surface", "check_config", "store_probe"]
