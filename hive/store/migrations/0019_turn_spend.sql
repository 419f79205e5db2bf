-- 0019: what a turn that is not a bee's spent, when it spent it (lesson module 7). A
-- review turn's spend went on the attempt it judged, so the day's spend read it at the
-- attempt's `finished_at` (a review today of yesterday's work counted yesterday), and a
-- shaping turn's spend went nowhere. Each such turn is now one row here, at `spent_at`,
-- where the day's spend and an issue's spend read it beside the attempts' bee turns and
-- the chat's turns. `kind`: 'review' or 'shaping'; `conversation_id`: the attempt a
-- review judged (NULL for a shaping turn); cost NULL: unknown (counted as unpriced).
CREATE TABLE hive.turn_spend (
    id              bigserial PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('review', 'shaping')),
    issue           integer NOT NULL,
    conversation_id uuid,
    key_index       integer,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    cost_usd        double precision,
    cost_source     text,
    spent_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX turn_spend_spent_at ON hive.turn_spend (spent_at);
CREATE INDEX turn_spend_issue ON hive.turn_spend (issue);
