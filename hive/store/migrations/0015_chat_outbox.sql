-- 0015: the chat (DESIGN 11, agents among themselves). `chat_outbox`: every bot message
-- is a row before it is a message. `cause` is what owes it, unique: the answer of one bot
-- to one Matrix event (`answer:<bot>:<event id>`) or one move (`move:<what>:...`), so a
-- message read twice, or a move seen twice, makes one row. `kind` is
-- hive.rules.chat.Kind; `body` NULL: still being composed (a bee's turn). A row is sent
-- under the Matrix transaction id `hive-outbox-<id>` (sent again after a crash, it posts
-- nothing new), or dropped with its reason. `chat_cursor`: the room's sync token and
-- since when moves are posted.
CREATE TABLE hive.chat_outbox (
    id          bigserial PRIMARY KEY,
    cause       text NOT NULL UNIQUE,
    bot         text NOT NULL,
    kind        smallint NOT NULL,
    depth       integer NOT NULL DEFAULT 1,
    issue       integer,
    reply_to    text,
    thread_root text,
    asked       text NOT NULL DEFAULT '',
    body        text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    asked_at    timestamptz,
    sent_at     timestamptz,
    event_id    text,
    dropped_at  timestamptz,
    dropped_reason text
);
CREATE INDEX chat_outbox_waiting ON hive.chat_outbox (id)
    WHERE sent_at IS NULL AND dropped_at IS NULL;
CREATE INDEX chat_outbox_sent ON hive.chat_outbox (sent_at) WHERE sent_at IS NOT NULL;

CREATE TABLE hive.chat_cursor (
    room        text PRIMARY KEY,
    next_batch  text,
    moves_since timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
