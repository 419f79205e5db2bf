"""`hive export ISSUE [-o FILE]`: write the bundle of `base..queen-<ISSUE>`, from this
checkout when the branch is here, else from `queen_bundle` (the same lookup as
`GET /queen/export/<issue>`). Exit 2: not an issue number; 3: nothing known of it;
4: no commits beyond base."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from hive.errors import HiveError
from hive.rules.branches import branch_name
from hive.services.database import store_connection
from hive.services.export import StoreExports, bundle_name
from hive.services.issues import issue_number
from hive.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "export",
        help="write an issue's bundle (from the checkout or queen_bundle)",
        description=__doc__,
    )
    parser.add_argument("issue", metavar="ISSUE", help="the issue number")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write it (default queen-ISSUE.bundle here; - for standard output)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    issue = issue_number(args.issue)
    settings = Settings.from_env()
    with store_connection(settings) as db:
        ref = StoreExports.from_settings(settings, db).find(issue)
        data = ref.read()
    where = f"head {ref.head_sha}, from the {'checkout' if ref.source == 'checkout' else 'store'}"
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        print(f"{branch_name(issue)}: {len(data)} bytes ({where})", file=sys.stderr)
        return 0
    path = Path(args.output or bundle_name(issue))
    try:
        _write_whole(path, data)
    except OSError as err:
        raise HiveError(f"cannot write {path}: {err.strerror or err}") from None
    print(f"wrote {path} ({len(data)} bytes, {where})")
    return 0


def _write_whole(path: Path, data: bytes) -> None:
    # a reader never sees half a bundle: write beside it, then rename over it
    fd, temp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".hive-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
