-- An agent's conversation carried to the next attempt of its issue (hive/agents/
-- conversation.py): the session file Claude Code or Codex left, stored by the bee before
-- its ending (like the bundle: one per issue, the latest attempt's), read where the next
-- attempt starts. `bytes` is empty and `note` says why when it was not kept (too large).
CREATE TABLE hive.queen_conversation (
    issue            integer PRIMARY KEY,
    conversation_id  uuid NOT NULL,
    agent            text NOT NULL,
    session_id       text NOT NULL,
    bytes            bytea NOT NULL,
    size             integer NOT NULL,
    note             text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (size = length(bytes) AND size <= 8 * 1024 * 1024)
);
