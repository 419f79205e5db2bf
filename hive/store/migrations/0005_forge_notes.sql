-- 0005: what the GitHub forge keeps: its comments on issues (one of each kind per
-- subject, edited rather than repeated) and the issues it opened for a check red on
-- the base branch.
CREATE TABLE hive.forge_note (
    -- what the note is about: "issue:<n>" for a comment, "check:<name>" for an issue
    -- the Queen opened about a check red on the base
    subject     text NOT NULL,
    -- the note's kind (hive.rules.forge.Note)
    kind        text NOT NULL,
    -- GitHub's id of the comment, or the number of the issue opened
    remote_id   bigint NOT NULL,
    -- the text it says now (an edit is sent only when the text changes)
    body        text NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subject, kind)
);
