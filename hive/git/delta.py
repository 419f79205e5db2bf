"""A git delta of one object against another, in time linear in their sizes.

dulwich's `create_delta` is a byte-level Myers diff in Rust that holds the interpreter
lock throughout: quadratic when the two differ (a 1 MiB random rewrite takes 16 s, a
2 MiB one a minute) and nothing else in the process runs meanwhile. This one copies
the common prefix and suffix (compared in 64 KiB slices, at C speed), and in between
copies each run of the target's lines found among the base's lines (a line is what
ends in a newline: for text a line, for binary data a short stretch); the rest goes in
as literal bytes. It runs in Python, so the interpreter switches to other threads
every few milliseconds, and it is never asked about objects over DELTA_MAX_BYTES
(those travel whole, as git's `core.bigFileThreshold` keeps large files whole).
The result is read by git's own `patch-delta` (and dulwich's `apply_delta`).
"""

from __future__ import annotations

# objects larger than this are never deltified: stored whole (zlib only)
DELTA_MAX_BYTES = 16 << 20
_SLICE = 64 << 10  # bytes compared at once when looking for the common ends
_COPY_MAX = 0xFFFF  # bytes one copy instruction carries (two size bytes)
_INSERT_MAX = 0x7F  # bytes one insert instruction carries
_COPY_MIN = 16  # a shorter match costs about as much as copying it literally
_CANDIDATES = 8  # base offsets kept per distinct line


def create_delta(base: bytes, target: bytes) -> bytes:
    """The git delta that rebuilds `target` from `base`."""
    out = bytearray(_size(len(base)) + _size(len(target)))
    head = _common_prefix(base, target)
    tail = _common_suffix(base, target, len(base) - head, len(target) - head)
    literal = bytearray()
    _copy(out, literal, 0, head)
    middle = target[head : len(target) - tail]
    if middle:
        _match_lines(out, literal, base, middle)
    _copy(out, literal, len(base) - tail, tail)
    _flush(out, literal)
    return bytes(out)


def _match_lines(out: bytearray, literal: bytearray, base: bytes, middle: bytes) -> None:
    """Copy from `base` each run of `middle`'s lines it holds (a run of at least
    _COPY_MIN bytes); the rest of `middle` goes in literally."""
    where: dict[bytes, list[int]] = {}
    offset = 0
    for line in base.splitlines(keepends=True):
        seen = where.setdefault(line, [])
        if len(seen) < _CANDIDATES:
            seen.append(offset)
        offset += len(line)
    run_start = run_end = -1  # the base bytes the current run copies
    for line in middle.splitlines(keepends=True):
        if run_end >= 0 and base.startswith(line, run_end):
            run_end += len(line)
            continue
        _end_run(out, literal, base, run_start, run_end)
        run_start = run_end = -1
        found = where.get(line)
        if found is None:
            literal += line
            continue
        run_start = found[0]
        run_end = run_start + len(line)
    _end_run(out, literal, base, run_start, run_end)


def _end_run(out: bytearray, literal: bytearray, base: bytes, start: int, end: int) -> None:
    if start < 0:
        return
    if end - start < _COPY_MIN:
        literal += base[start:end]
    else:
        _copy(out, literal, start, end - start)


def _copy(out: bytearray, literal: bytearray, start: int, length: int) -> None:
    """Copy instructions for base bytes [start, start + length), after the literal
    bytes gathered so far."""
    if length <= 0:
        return
    _flush(out, literal)
    while length:
        size = min(length, _COPY_MAX)
        op = 0x80
        args = bytearray()
        for i in range(4):
            byte = (start >> (8 * i)) & 0xFF
            if byte:
                op |= 1 << i
                args.append(byte)
        for i in range(2):
            byte = (size >> (8 * i)) & 0xFF
            if byte:
                op |= 1 << (4 + i)
                args.append(byte)
        out.append(op)
        out += args
        start += size
        length -= size


def _flush(out: bytearray, literal: bytearray) -> None:
    """Insert instructions for the literal bytes gathered, which are then cleared."""
    for at in range(0, len(literal), _INSERT_MAX):
        piece = literal[at : at + _INSERT_MAX]
        out.append(len(piece))
        out += piece
    literal.clear()


def _size(n: int) -> bytes:
    """A size in a delta's header: seven bits a byte, least significant first."""
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if not n:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share."""
    limit = min(len(a), len(b))
    at = 0
    while at < limit and a[at : at + _SLICE] == b[at : at + _SLICE]:
        at += _SLICE
    if at >= limit:
        return limit
    low, high = at, min(at + _SLICE, limit)  # the answer is in [low, high)
    while low < high:
        mid = (low + high + 1) // 2
        if a[at:mid] == b[at:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: bytes, b: bytes, a_room: int, b_room: int) -> int:
    """How many trailing bytes `a` and `b` share, at most the shorter room (so the
    suffix never overlaps the prefix already taken)."""
    limit = min(a_room, b_room)
    ends = len(a), len(b)
    at = 0
    while at < limit:
        step = min(_SLICE, limit - at)
        if a[ends[0] - at - step : ends[0] - at] != b[ends[1] - at - step : ends[1] - at]:
            break
        at += step
    if at >= limit:
        return limit
    low, high = at, min(at + _SLICE, limit)
    while low < high:
        mid = (low + high + 1) // 2
        if a[ends[0] - mid : ends[0] - at] == b[ends[1] - mid : ends[1] - at]:
            low = mid
        else:
            high = mid - 1
    return low
