"""One module per `hive` verb: `register(subparsers)` adds its parser and sets `func`.

A verb parses its arguments, calls a use case of `hive.services` and prints the answer.
Names defined here must not be a verb's (`from hive.commands import migrate` would find
them first).
"""

from __future__ import annotations
