"""The intended house (docs/architecture.json) and the import contracts agree: each of its
`never`s is a forbidden contract of import-linter (pyproject.toml) over the same parts, so
`make lint` (`lint-imports`) fails when one is broken."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _module(path: str) -> str:
    return path.rstrip("/").removesuffix(".py").replace("/", ".")


def _contracts() -> dict[str, dict[str, Any]]:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["name"]: c for c in tool["contracts"]}


def test_each_never_is_a_forbidden_contract_over_its_parts() -> None:
    house = json.loads((ROOT / "docs" / "architecture.json").read_text())
    parts = {name: [_module(p) for p in part["is"]] for name, part in house["parts"].items()}
    contracts = _contracts()
    missing = []
    for source, target, why in house["never"]:
        contract = contracts.get(f"never {source} -> {target}: {why}")
        if contract is None:
            missing.append(f"{source} -> {target}")
            continue
        assert contract["type"] == "forbidden"
        assert sorted(contract["source_modules"]) == sorted(parts[source])
        assert sorted(contract["forbidden_modules"]) == sorted(parts[target])
    assert missing == []


def test_every_part_is_a_module_of_the_tree() -> None:
    house = json.loads((ROOT / "docs" / "architecture.json").read_text())
    absent = [p for part in house["parts"].values() for p in part["is"] if not (ROOT / p).exists()]
    assert absent == []
