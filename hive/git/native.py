"""Whether dulwich runs on its compiled extensions (`_pack`, `_objects`, `_diff_tree`).

dulwich falls back to pure Python for each of them in silence when its wheel was built
without them; delta application, tree parsing and tree diffs are then several times
slower. `missing_extensions()` names every function still on the fallback; the bench
reports it and a test requires it to be empty.
"""

from __future__ import annotations

import dulwich.diff_tree
import dulwich.objects
import dulwich.pack

# module -> functions that dulwich replaces with the compiled ones when it can
_REPLACED = {
    dulwich.pack: ("apply_delta", "bisect_find_sha"),
    dulwich.objects: ("parse_tree", "sorted_tree_items"),
    dulwich.diff_tree: ("_is_tree", "_merge_entries", "_count_blocks"),
}


def missing_extensions() -> list[str]:
    """`module.function` of each dulwich function that is not the compiled one."""
    missing = []
    for module, names in _REPLACED.items():
        for name in names:
            # a compiled function is a builtin; the Python fallback is a plain function
            if type(getattr(module, name)).__name__ != "builtin_function_or_method":
                missing.append(f"{module.__name__}.{name}")
    return missing
