"""The hive: a Queen that decides, runners that execute, PostgreSQL as the one shared store."""

__version__ = "0.1.0"
