"""One module per `hive` verb: `register(subparsers)` adds its parser and sets `func`."""
