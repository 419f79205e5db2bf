-- 0018: a bee's bot answers by a turn (DESIGN 11, agents among themselves). A row of
-- `chat_outbox` with no body is a bee's answer still owed: a process that runs turns
-- claims it (`turn_by`, until `turn_until`; `turn_tries` counts the claims, so a turn a
-- restart cut is known when the row is claimed again), runs the turn, and writes the
-- answer as its body (`composed_at`: from then on the clocks hold it). What each turn
-- spent is on the row (`turn_*`, summed over its tries; `turn_ended_at` the last), where
-- the day's spend reads it beside the attempts'. A row owed, or let go by a stopping
-- process, NOTIFYs `hive_chat` with its id: the processes that run turns wake.
ALTER TABLE hive.chat_outbox
    ADD COLUMN composed_at timestamptz,
    ADD COLUMN turn_by text,
    ADD COLUMN turn_until timestamptz,
    ADD COLUMN turn_tries integer NOT NULL DEFAULT 0,
    ADD COLUMN turn_key_index integer,
    ADD COLUMN turn_input_tokens bigint,
    ADD COLUMN turn_output_tokens bigint,
    ADD COLUMN turn_cost_usd double precision,
    ADD COLUMN turn_ended_at timestamptz;

CREATE INDEX chat_outbox_turns ON hive.chat_outbox (id)
    WHERE body IS NULL AND dropped_at IS NULL;
CREATE INDEX chat_outbox_turn_spend ON hive.chat_outbox (turn_ended_at)
    WHERE turn_ended_at IS NOT NULL;

CREATE FUNCTION hive.notify_chat_turn() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('hive_chat', NEW.id::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER chat_turn_owed AFTER INSERT ON hive.chat_outbox
    FOR EACH ROW WHEN (NEW.body IS NULL) EXECUTE FUNCTION hive.notify_chat_turn();
CREATE TRIGGER chat_turn_let_go AFTER UPDATE OF turn_until ON hive.chat_outbox
    FOR EACH ROW
    WHEN (NEW.body IS NULL AND NEW.dropped_at IS NULL AND NEW.turn_until IS NULL
        AND OLD.turn_until IS NOT NULL)
    EXECUTE FUNCTION hive.notify_chat_turn();
