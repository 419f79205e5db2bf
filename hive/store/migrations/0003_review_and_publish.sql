-- The second half of an order's life (DESIGN 10): review, checks, the merge gate,
-- publishing as a job, and the issue's close.

-- An issue closes when its work is merged or by hand.
ALTER TABLE hive.queen_issue
    -- why it closed, for people: "merged as <sha>", "closed by hand", ...
    ADD COLUMN closed_reason text,
    -- when it closed; NULL while open (a reopen clears it)
    ADD COLUMN closed_at timestamptz;

ALTER TABLE hive.queen_dispatch
    -- the reviewer's pause before revisiting a row that answered `wait` (RULES 8: 30 s,
    -- doubling to 900 s; any other answer puts it back to 0)
    ADD COLUMN review_pause_seconds integer NOT NULL DEFAULT 0,
    -- how often the reviewer looked at this attempt (0 = never: it goes first)
    ADD COLUMN review_visits integer NOT NULL DEFAULT 0,
    -- the commit this attempt's work landed as on the base, once published
    ADD COLUMN merged_sha text,
    ADD COLUMN merged_at timestamptz,
    -- a person opened the merge gate (`hive approve N`): zero checks never open it alone
    ADD COLUMN approved_at timestamptz,
    ADD COLUMN approved_by text;

-- One row per check run (HIVE_CHECK_<NAME>) by a publish job; the merge gate reads them.
CREATE TABLE hive.queen_check (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue        integer NOT NULL,
    -- the order's attempt the check judged (a later attempt's checks start afresh)
    attempt      integer NOT NULL,
    -- the job that ran it
    job          bigint REFERENCES hive.queen_job (id),
    -- the check's name, from HIVE_CHECK_<NAME>
    name         text NOT NULL,
    result       text NOT NULL CHECK (result IN ('pass', 'fail', 'timeout', 'error')),
    -- NULL when it never exited by itself (timeout, or it could not start)
    exit_code    integer,
    seconds      double precision NOT NULL DEFAULT 0,
    -- the end of its output, what a red check sends back; the writer keeps the last
    -- 4000 characters
    output_tail  text NOT NULL DEFAULT '' CHECK (char_length(output_tail) <= 4000),
    -- the tree it ran on (base tip merged with the branch): a check of another tree
    -- says nothing about this one
    merge_sha    text,
    at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX queen_check_issue_at ON hive.queen_check (issue, at);

-- The epoch is the job's fence: every claim bumps it and every write names it, so no
-- second fence column is needed.
ALTER TABLE hive.queen_job
    -- one human sentence about its last step ("merged as 1a2b3c4", "parked: awaits approval")
    ADD COLUMN detail text,
    -- the order's attempt the job works for (a send-back's next attempt gets a new job)
    ADD COLUMN attempt integer;
-- At most one live job of a kind per issue: creating it again finds the live one.
CREATE UNIQUE INDEX queen_job_live ON hive.queen_job (kind, issue)
    WHERE state IN ('ready', 'parked');
-- A resolved or expired wait finds the job parked on it.
CREATE INDEX queen_job_parked ON hive.queen_job (wait_id) WHERE state = 'parked';
