-- 0008: the board's hint (GET /board/events): every change a card or an issue's page
-- shows NOTIFYs `hive_board` with `<kind>:<issue>`, from triggers, so no writer (today's
-- or a later one) can forget it. Kinds: i (the issue), o (its order), t (a transcript
-- line), c (a check), j (a job), b (a bundle), r (a round report: no issue, `r:`).
-- A NOTIFY is only a hint: the board reads the rows again. A heartbeat (claimed_at and
-- nothing else) notifies nothing: it changes nothing a person sees.
--
-- A NOTIFY is not free: every transaction that sends one takes the server's one notify
-- lock at commit, so runners claiming and ending at once queue behind each other (the
-- claim bench: 4x slower). So the triggers notify only while a board is open somewhere:
-- a process whose board listens holds a row in queen_board_watch, renewed while it
-- listens and dropped when it stops (or left to expire if it dies).

CREATE TABLE hive.queen_board_watch (
    -- the process listening (its runner name and a random suffix)
    holder      text PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);

CREATE FUNCTION hive.notify_board() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    row_json jsonb;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM hive.queen_board_watch WHERE expires_at > now()) THEN
        RETURN NULL;
    END IF;
    row_json := to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END);
    PERFORM pg_notify(
        'hive_board',
        TG_ARGV[0] || ':' || COALESCE(row_json ->> 'issue', row_json ->> 'number', '')
    );
    RETURN NULL;
END
$$;

CREATE TRIGGER board_issue AFTER INSERT OR UPDATE OR DELETE ON hive.queen_issue
    FOR EACH ROW EXECUTE FUNCTION hive.notify_board('i');
CREATE TRIGGER board_order_written AFTER INSERT OR DELETE ON hive.queen_dispatch
    FOR EACH ROW EXECUTE FUNCTION hive.notify_board('o');
CREATE TRIGGER board_order_moved AFTER UPDATE ON hive.queen_dispatch
    FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'claimed_at') IS DISTINCT FROM (to_jsonb(NEW) - 'claimed_at'))
    EXECUTE FUNCTION hive.notify_board('o');
CREATE TRIGGER board_transcript AFTER INSERT ON hive.queen_transcript
    FOR EACH ROW EXECUTE FUNCTION hive.notify_board('t');
CREATE TRIGGER board_check AFTER INSERT OR UPDATE ON hive.queen_check
    FOR EACH ROW EXECUTE FUNCTION hive.notify_board('c');
CREATE TRIGGER board_job AFTER INSERT OR UPDATE ON hive.queen_job
    FOR EACH ROW EXECUTE FUNCTION hive.notify_board('j');
CREATE TRIGGER board_bundle AFTER INSERT OR UPDATE OR DELETE ON hive.queen_bundle
    FOR EACH ROW EXECUTE FUNCTION hive.notify_board('b');
CREATE TRIGGER board_report AFTER INSERT ON hive.queen_report
    FOR EACH STATEMENT EXECUTE FUNCTION hive.notify_board('r');
