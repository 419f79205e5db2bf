-- 0001: every table of DESIGN 4, with the columns RULES 9 and 10 imply for waits, jobs
-- and effects. Every object is schema-qualified: a search_path without `hive` still works.

CREATE SCHEMA IF NOT EXISTS hive;

CREATE TABLE hive.queen_issue (
    number      integer PRIMARY KEY,
    title       text NOT NULL,
    body        text NOT NULL DEFAULT '',
    labels      text[] NOT NULL DEFAULT '{}',
    boundary    text[] NOT NULL DEFAULT '{}',
    criteria    jsonb NOT NULL DEFAULT '[]',
    state       text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
    blocked_by  integer[] NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The order: one row per issue, its current attempt. The row is the protocol (DESIGN 5).
CREATE TABLE hive.queen_dispatch (
    issue            integer PRIMARY KEY,
    branch           text NOT NULL,
    base             text NOT NULL,
    base_sha         text,
    started          boolean NOT NULL DEFAULT false,
    detail           text,
    conversation_id  uuid NOT NULL,
    owned_paths      text[] NOT NULL DEFAULT '{}',
    key_index        integer,
    key_fingerprint  text,
    brief            text,
    queued_at        timestamptz,
    claimed_by       text,
    claimed_at       timestamptz,
    -- NOT NULL so that `runner <> ALL(refused_by)` is never NULL
    refused_by       text[] NOT NULL DEFAULT '{}',
    dispatched_at    timestamptz,
    finished_at      timestamptz,
    outcome          text CHECK (char_length(outcome) <= 64),
    salvaged_at      timestamptz,
    salvaged_sha     text,
    salvaged_files   text[],
    review_state     text,
    review_note      text,
    reviewed_at      timestamptz,
    sendbacks        integer NOT NULL DEFAULT 0,
    provider         text,
    model            text,
    input_tokens     bigint,
    output_tokens    bigint,
    attempt          integer NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL DEFAULT now()
);

-- The claim's pick: queued, unclaimed, unfinished, started rows, oldest first (issue
-- breaks ties, so a batch queued in one transaction needs no sort).
CREATE INDEX queen_dispatch_claimable
    ON hive.queen_dispatch (queued_at, issue)
    WHERE queued_at IS NOT NULL AND claimed_by IS NULL AND finished_at IS NULL AND started;
-- The silent-runner reaper: claimed unfinished rows by heartbeat age.
CREATE INDEX queen_dispatch_claimed
    ON hive.queen_dispatch (claimed_at)
    WHERE claimed_by IS NOT NULL AND finished_at IS NULL;
-- The two-hour rule and the boot reaper: unfinished rows by turn start.
CREATE INDEX queen_dispatch_in_flight
    ON hive.queen_dispatch (dispatched_at)
    WHERE finished_at IS NULL;

CREATE TABLE hive.queen_dispatch_history (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue        integer NOT NULL,
    archived_at  timestamptz NOT NULL DEFAULT now(),
    snapshot     jsonb NOT NULL
);
CREATE INDEX queen_dispatch_history_issue ON hive.queen_dispatch_history (issue, id);

CREATE TABLE hive.queen_bundle (
    issue       integer PRIMARY KEY,
    branch      text NOT NULL,
    base        text NOT NULL,
    base_sha    text,
    head_sha    text NOT NULL,
    runner      text,
    bytes       bytea NOT NULL,
    size        integer NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hive.queen_transcript (
    conversation_id  uuid NOT NULL,
    seq              integer NOT NULL,
    issue            integer NOT NULL,
    at               timestamptz NOT NULL DEFAULT now(),
    kind             text NOT NULL,
    text             text NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
CREATE INDEX queen_transcript_issue ON hive.queen_transcript (issue, at);

CREATE TABLE hive.queen_runner (
    name        text PRIMARY KEY,
    started_at  timestamptz NOT NULL DEFAULT now(),
    seen_at     timestamptz NOT NULL DEFAULT now(),
    slots       integer NOT NULL DEFAULT 1,
    running     integer NOT NULL DEFAULT 0,
    draining    boolean NOT NULL DEFAULT false
);

-- RULES 3: the fence never goes back, not even on release (release = expire it).
CREATE TABLE hive.queen_lease (
    name        text PRIMARY KEY,
    holder      text NOT NULL,
    fence       bigint NOT NULL DEFAULT 1,
    expires_at  timestamptz NOT NULL
);

-- One row per round, written even when the round did nothing.
CREATE TABLE hive.queen_report (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    headline  text NOT NULL,
    body      text NOT NULL DEFAULT '',
    needs_you boolean NOT NULL DEFAULT false
);
CREATE INDEX queen_report_at ON hive.queen_report (at);

-- RULES 9: state WAITING 0, RESOLVED 1, EXPIRED 2, CANCELLED 3; a key, a wake time or
-- both; claims bump `epoch` and move `claim_due_at` ahead; writes land at the claimed epoch.
CREATE TABLE hive.queen_wait (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner         text NOT NULL,
    key           text,
    wake_at       timestamptz,
    state         smallint NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2, 3)),
    epoch         bigint NOT NULL DEFAULT 0,
    claimed_by    text,
    claim_due_at  timestamptz,
    payload       jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    resolved_at   timestamptz,
    CHECK (key IS NOT NULL OR wake_at IS NOT NULL)
);
CREATE INDEX queen_wait_due ON hive.queen_wait (wake_at) WHERE state = 0;
CREATE INDEX queen_wait_key ON hive.queen_wait (key) WHERE state = 0;

-- RULES 10: a job is a durable procedure of named steps, claimed like a wait.
CREATE TABLE hive.queen_job (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind          text NOT NULL,
    issue         integer,
    step          text NOT NULL,
    state         text NOT NULL DEFAULT 'ready'
                  CHECK (state IN ('ready', 'parked', 'done', 'failed', 'cancelled')),
    args          jsonb NOT NULL DEFAULT '{}',
    epoch         bigint NOT NULL DEFAULT 0,
    claimed_by    text,
    claim_due_at  timestamptz,
    wait_id       bigint REFERENCES hive.queen_wait (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);
CREATE INDEX queen_job_ready ON hive.queen_job (claim_due_at NULLS FIRST, id)
    WHERE state = 'ready';

-- Each step's external effect is journaled under (job, effect_key) before it is acted on.
CREATE TABLE hive.queen_effect (
    job         bigint NOT NULL REFERENCES hive.queen_job (id),
    effect_key  text NOT NULL,
    done        boolean NOT NULL DEFAULT false,
    result      jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    done_at     timestamptz,
    PRIMARY KEY (job, effect_key)
);
