-- 0012: the shaper's proposals (DESIGN 11), one row per issue. `state`: `pending` (shown
-- to its author, HIVE_SHAPE=ask), `applied` (its boundary and criteria are the issue's),
-- `refused` (the shape rule refused it: `note` says why), `failed` (the shaping turn
-- failed HIVE_REVIEW_FAILURES_MAX times in a row: a person shapes it). `failures` and
-- `retry_at` are the floor of a shaping turn that could not run (hive/rules/
-- review_failures.py); `problem` is the shape gate's reason the proposal answered, so
-- an issue edited since is shaped again.
CREATE TABLE hive.queen_shape (
    issue       integer PRIMARY KEY REFERENCES hive.queen_issue (number) ON DELETE CASCADE,
    state       text NOT NULL,
    boundary    text[] NOT NULL DEFAULT '{}',
    criteria    jsonb NOT NULL DEFAULT '[]',
    problem     text NOT NULL DEFAULT '',
    note        text NOT NULL DEFAULT '',
    failures    integer NOT NULL DEFAULT 0,
    pause_seconds integer NOT NULL DEFAULT 0,
    retry_at    timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
