"""A clone of a repository on this machine, made as git's local clone makes it: the
source's packs and loose objects are hard-linked (copied when a link is not allowed)
into the new repository, and no pack is generated.

Only regular files are taken, each opened without following a symlink, and only from
directories that are not symlinks: a source repository whose `objects` holds a symlink
to a file elsewhere (git's CVE-2022-39253) gives nothing of that file. A source with
alternates is not linked (the caller fetches instead): its objects are not all in its
own directory. A shallow source gives its `shallow` file too: the clone is as shallow as
it is.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from pathlib import Path

_PACK = re.compile(r"^pack-[0-9a-f]{40}(?:[0-9a-f]{24})?\.pack$")
_FANOUT_DIR = re.compile(r"^[0-9a-f]{2}$")
_LOOSE = re.compile(r"^[0-9a-f]{38}(?:[0-9a-f]{24})?$")
_NOT_LINKABLE = (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOTSUP)
_HEX = re.compile(rb"^[0-9a-f]{40}$")


def read_branch(git_dir: Path, ref: bytes) -> bytes | None:
    """The sha `ref` (`refs/heads/<name>`) names in the repository at `git_dir`, from
    its loose ref or its packed-refs, read by hand: dulwich parses and checks every
    packed ref first, a fifth of a second for a forge's 10,000. None when absent, or
    when the ref is not a plain sha (a symbolic branch: the caller asks dulwich)."""
    loose = _read_regular(git_dir / os.fsdecode(ref))
    if loose is not None:
        sha = loose.strip()
        return sha if _HEX.match(sha) else None
    packed = _read_regular(git_dir / "packed-refs")
    if packed is None:
        return None
    end = packed.find(b" " + ref + b"\n")
    if end < 0 and packed.endswith(b" " + ref):
        end = len(packed) - len(ref) - 1
    if end < 0:
        return None
    sha = packed[packed.rfind(b"\n", 0, end) + 1 : end]
    return sha if _HEX.match(sha) else None


def link_clone(source: Path, target: Path) -> bool:
    """Fill the new repository at git directory `target` with the objects of the one at
    `source`; False (nothing done) when the source's objects cannot all be linked: its
    `objects` is not a plain directory, or it has alternates."""
    objects = source / "objects"
    if not _plain_dir(objects) or os.path.lexists(objects / "info" / "alternates"):
        return False
    link_objects(objects, target / "objects")
    shallow = _read_regular(source / "shallow")
    if shallow is not None:
        (target / "shallow").write_bytes(shallow)
    return True


def _read_regular(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read()


def link_objects(source: Path, target: Path) -> int:
    """Link or copy every pack (its `.pack`, then its `.idx`) and loose object of the
    `objects` directory `source` into `target`; the number of files taken. A file that
    vanishes meanwhile (the source was repacked) is skipped: the fetch that follows brings
    what is missing."""
    taken = 0
    pack_dir = source / "pack"
    if _plain_dir(pack_dir):
        (target / "pack").mkdir(parents=True, exist_ok=True)
        for name in sorted(os.listdir(pack_dir)):
            if not _PACK.match(name):
                continue
            index = name[: -len(".pack")] + ".idx"
            # the pack goes in before its index: only a pack with an index is read
            if not _take(pack_dir / name, target / "pack" / name):
                continue
            if _take(pack_dir / index, target / "pack" / index):
                taken += 2
            else:
                os.unlink(target / "pack" / name)
    for fanout in sorted(os.listdir(source)):
        if not _FANOUT_DIR.match(fanout) or not _plain_dir(source / fanout):
            continue
        for name in os.listdir(source / fanout):
            if _LOOSE.match(name):
                (target / fanout).mkdir(exist_ok=True)
                taken += _take(source / fanout / name, target / fanout / name)
    return taken


def _link_open_file(fd: int, target: Path) -> bool:
    """Hard-link the file open at `fd` (not a name, which may change meanwhile) as
    `target`, through its `/proc/self/fd` entry; False when that is refused or there is
    no `/proc`."""
    into = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # a destination directory makes it linkat, which follows the /proc entry to the
        # file when asked; plain link() would link the entry itself
        os.link(f"/proc/self/fd/{fd}", target.name, dst_dir_fd=into, follow_symlinks=True)
        return True
    except OSError as err:
        if err.errno in (*_NOT_LINKABLE, errno.ENOENT):
            return False
        raise
    finally:
        os.close(into)


def _plain_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _take(source: Path, target: Path) -> bool:
    """Hard-link `source` to `target`, or copy it when linking is refused; False when
    `source` is gone or is not a regular file."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ELOOP):
            return False
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        if _link_open_file(fd, target):
            return True
        with open(fd, "rb", closefd=False) as reading, open(target, "xb") as writing:
            shutil.copyfileobj(reading, writing, 1 << 20)
        os.chmod(target, 0o444)
        return True
    finally:
        os.close(fd)
