-- name: end_key_rest
-- A turn on the order's key ended without a refusal: the key's run of refusals and its rest end (only a row of that same key, and only when it has something to end).
UPDATE hive.queen_key_rest AS r
SET strikes = 0, rests_until = NULL, reason = NULL, updated_at = now()
FROM hive.queen_dispatch AS d
WHERE d.issue = %(issue)s AND d.conversation_id = %(conversation_id)s
  AND r.key_index = d.key_index AND r.key_fingerprint IS NOT DISTINCT FROM d.key_fingerprint
  AND (r.strikes > 0 OR r.rests_until IS NOT NULL)
RETURNING r.key_index;

-- name: ensure_key_rest
-- The order's key has a rest row (none resting yet), so the next statement can lock it.
INSERT INTO hive.queen_key_rest (key_index, key_fingerprint)
SELECT key_index, key_fingerprint FROM hive.queen_dispatch
WHERE issue = %(issue)s AND conversation_id = %(conversation_id)s AND key_index IS NOT NULL
ON CONFLICT (key_index) DO NOTHING
RETURNING key_index;

-- name: lock_key_rest
-- The order's key's rest, locked until the transaction ends (endings on one key move its rest one at a time), with the order's own fingerprint and the transaction's time.
SELECT r.key_index, r.key_fingerprint, r.strikes, r.rests_until,
    d.key_fingerprint AS order_fingerprint, now() AS at
FROM hive.queen_key_rest AS r
JOIN hive.queen_dispatch AS d ON d.key_index = r.key_index
WHERE d.issue = %(issue)s AND d.conversation_id = %(conversation_id)s
FOR UPDATE OF r;

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
