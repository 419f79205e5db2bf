"""The chaos run's agent and its log.

The agent is a shell script (`command:sh agent.sh <ctl>`): it reads its turn's length in
ticks from `<ctl>/ticks/<issue>`, appends `start`, one `tick` per TICK_SECONDS and, once
it has committed its line to its boundary file with the git binary, `end` to
`<ctl>/turns.log`. Each line is one short append (atomic under O_APPEND), so the file's
order is the order the turns did things in: the overlap check needs no clock. A turn is
named by its runner (the directory its worktree is in) and its pid.

Every HOSTILE_EVERYth issue's agent is hostile besides (issue 25): it commits, itself, a
new file outside its boundary and a symlink to /etc/passwd with its line, and leaves a
FIFO in its worktree. Its bundle must still carry its boundary file alone, and its
ending must not block on the FIFO. It also prints protocol lines no turn can mean (a
20-digit token count, a superscript digit, a reset in the year 33658) and a terminal
escape: they are noted and ignored, and its order still ends like any other.

A turn whose brief says its branch does not merge into the base (a person's push
conflicted with it: --loop) merges that base first, keeping the base's file and the
turns' lines, and logs `merge`.
"""

from __future__ import annotations

from dataclasses import dataclass

LOG_NAME = "turns.log"
HOSTILE_EVERY = 4  # every 4th issue's agent also commits outside its boundary

SCRIPT = r"""#!/bin/sh
# The chaos bee (hive/chaos/agent.py): a turn of random length that logs itself.
ctl=$1
HOSTILE_EVERY=@HOSTILE_EVERY@
n=$HIVE_ISSUE
runner=$(basename "$(dirname "$PWD")")
turn="$runner/$$"
file=$(printf '%s\n' "$HIVE_BOUNDARY" | head -n 1)
ticks=$(cat "$ctl/ticks/$n")
echo "start $n $turn" >> "$ctl/turns.log"
i=0
while [ "$i" -lt "$ticks" ]; do
    sleep 0.1
    echo "tick $n $turn" >> "$ctl/turns.log"
    i=$((i + 1))
done
G="git -c user.name=bee -c user.email=bee@hive.invalid -c commit.gpgsign=false"
# sent back because the branch conflicts with the base: merge the base named, keeping
# the base's file and the turns' lines, as an agent resolving it by hand would
at=$(grep -o "does not merge into the base at [0-9a-f]*" "$HIVE_BRIEF_FILE" 2>/dev/null \
    | head -n 1 | sed 's/.* //')
if [ -n "$at" ]; then
    echo "merge $n $turn" >> "$ctl/turns.log"
    base=$at
    git rev-parse -q --verify "$at^{commit}" >/dev/null || base=refs/remotes/origin/main
    if ! $G merge -q --no-edit "$base" >/dev/null 2>&1; then
        { git show "$base:$file"; git show "HEAD:$file" | grep '^chaos '; } > "$file.merged"
        mv "$file.merged" "$file"
        git add "$file"
        $G commit -q --no-edit || exit 1
    fi
fi
echo "chaos $n turn $turn" >> "$file"
if [ $((n % HOSTILE_EVERY)) -eq 0 ]; then
    echo "outside the boundary" > "outside-$n.txt"
    ln -sf /etc/passwd "passwd-$n"
    git add -A
    mkfifo "pipe-$n" 2>/dev/null
    echo "HIVE-USAGE: input=1 output=99999999999999999999"
    printf 'HIVE-USAGE: output=\302\262\n'
    echo "HIVE-REFUSAL: quota resets=999999999999"
    printf 'osc \033]52;c;aGl2ZQ==\007 and a clear \033[2J\n'
fi
$G commit -q -a -m "chaos $n turn $turn" || exit 1
echo "end $n $turn" >> "$ctl/turns.log"
""".replace("@HOSTILE_EVERY@", str(HOSTILE_EVERY))


@dataclass(frozen=True)
class TurnEvent:
    kind: str  # start, tick, end
    issue: int
    turn: str  # runner/pid


def merges(text: str) -> int:
    """How many turns merged the base after a conflict (their `merge` lines)."""
    return sum(1 for line in text.splitlines() if line.startswith("merge "))


def parse_log(text: str) -> list[TurnEvent]:
    """The log's lines in order; a torn or foreign line (a turn killed mid-write) is
    skipped."""
    events = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[0] not in ("start", "tick", "end") or not parts[1].isdigit():
            continue
        events.append(TurnEvent(parts[0], int(parts[1]), parts[2]))
    return events


def work_line(issue: int, turn: str) -> str:
    """The line a turn adds to its boundary file (a finished order's bundle holds one)."""
    return f"chaos {issue} turn {turn}"
