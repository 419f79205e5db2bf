"""The hive's decisions as pure rules, one module per card of RULES.md and the drain card.

Every module here is a functional core: small typed functions over plain ints, strings,
tuples and frozen dataclasses, with the constants they decide by (each carrying its unit in
its name). Nothing here does I/O or reads the clock: time comes in as arguments, so the
actors gather facts, call a rule, and act on its answer, and every rule is tested by its
card's own vectors.
"""
