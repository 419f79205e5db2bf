-- name: claim_lease
-- Take the lease when it is free, expired or already ours; every claim bumps the fence.
INSERT INTO hive.queen_lease AS l (name, holder, fence, expires_at)
VALUES (%(name)s, %(holder)s, 1, now() + make_interval(secs => %(ttl_seconds)s::float8))
ON CONFLICT (name) DO UPDATE SET
    holder = excluded.holder, fence = l.fence + 1, expires_at = excluded.expires_at
WHERE l.holder = excluded.holder OR l.expires_at <= now()
RETURNING name, holder, fence, expires_at;

-- name: renew_lease
-- Extend our lease at the fence we hold, while it has not expired.
UPDATE hive.queen_lease
SET expires_at = now() + make_interval(secs => %(ttl_seconds)s::float8)
WHERE name = %(name)s AND holder = %(holder)s AND fence = %(fence)s AND expires_at > now()
RETURNING name, holder, fence, expires_at;

-- name: release_lease
-- Let our lease go by expiring it; the fence stays, so it never goes back.
UPDATE hive.queen_lease SET expires_at = now()
WHERE name = %(name)s AND holder = %(holder)s AND fence = %(fence)s
RETURNING name;

-- name: lease_held
-- Whether this holder still holds the lease at this fence and it has not expired (held now means held since that claim: the fence never goes back and an expired lease is never renewed).
SELECT name FROM hive.queen_lease
WHERE name = %(name)s AND holder = %(holder)s AND fence = %(fence)s AND expires_at > now();

-- name: get_lease
-- One lease by name.
SELECT name, holder, fence, expires_at FROM hive.queen_lease WHERE name = %(name)s;
