-- name: lock_key_rest
-- The order's key's rest (a row made when it has none), locked until the transaction ends (endings on one key move its rest one at a time), with the order's own fingerprint and the transaction's time; no row: the order has no key.
WITH d AS (
    SELECT key_index, key_fingerprint FROM hive.queen_dispatch
    WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s AND key_index IS NOT NULL
), r AS (
    INSERT INTO hive.queen_key_rest AS r (key_index, key_fingerprint)
    SELECT key_index, key_fingerprint FROM d
    ON CONFLICT (key_index) DO UPDATE SET key_index = r.key_index
    RETURNING r.key_index, r.key_fingerprint, r.strikes, r.rests_until
)
SELECT r.key_index, r.key_fingerprint, r.strikes, r.rests_until,
    d.key_fingerprint AS order_fingerprint, now() AS at
FROM r JOIN d ON d.key_index = r.key_index;

-- name: lock_rest_of_key
-- A key's rest by its index (a row made with this key's fingerprint when it has none), locked until the transaction ends, with the transaction's time: a turn that is no order's (a chat turn) met a refusal on it.
INSERT INTO hive.queen_key_rest AS r (key_index, key_fingerprint)
VALUES (%(key_index)s, %(key_fingerprint)s)
ON CONFLICT (key_index) DO UPDATE SET key_index = r.key_index
RETURNING r.key_index, r.key_fingerprint, r.strikes, r.rests_until, now() AS at;

-- name: set_key_rest
-- Write a key's rest as the rule decided it (hive/rules/rests.py).
UPDATE hive.queen_key_rest
SET key_fingerprint = %(key_fingerprint)s, strikes = %(strikes)s,
    rests_until = %(rests_until)s, reason = %(reason)s, updated_at = now()
WHERE key_index = %(key_index)s
RETURNING key_index;

-- name: resting_keys
-- The keys resting now, with the store's time (every Queen reads the same clock).
SELECT key_index, key_fingerprint, strikes, rests_until, reason, now() AS at
FROM hive.queen_key_rest
WHERE rests_until > now()
ORDER BY key_index;
