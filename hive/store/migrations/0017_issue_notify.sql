-- 0017: `hive_issues` (the Queen's hint: an issue was added, reopened or changed) comes
-- from one trigger, so no writer (today's or a later one) can forget it; the writers
-- NOTIFYed it by hand in five statements. It fires on a new issue, on an issue opened
-- again, and on a change to what a round reads of it (title, body, labels, boundary,
-- criteria, blockers, account); a close, a follow of its GitHub issue or a heartbeat of
-- updated_at alone wakes nobody. The payload is the issue's number, as before.
CREATE FUNCTION hive.notify_issue() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('hive_issues', NEW.number::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER issue_added AFTER INSERT ON hive.queen_issue
    FOR EACH ROW EXECUTE FUNCTION hive.notify_issue();
CREATE TRIGGER issue_changed AFTER UPDATE ON hive.queen_issue
    FOR EACH ROW
    WHEN ((OLD.state = 'closed' AND NEW.state = 'open')
        OR (OLD.title, OLD.body, OLD.labels, OLD.boundary, OLD.criteria, OLD.blocked_by,
            OLD.account)
        IS DISTINCT FROM (NEW.title, NEW.body, NEW.labels, NEW.boundary, NEW.criteria,
            NEW.blocked_by, NEW.account))
    EXECUTE FUNCTION hive.notify_issue();

-- A grant of credit landing wakes her too (`credit:<account>`): the account's waiting
-- issues may go at once.
CREATE FUNCTION hive.notify_credit() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('hive_issues', 'credit:' || NEW.account);
    RETURN NULL;
END
$$;

CREATE TRIGGER credit_granted AFTER INSERT ON hive.queen_credit_ledger
    FOR EACH ROW WHEN (NEW.kind = 'grant') EXECUTE FUNCTION hive.notify_credit();
