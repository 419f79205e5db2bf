-- name: listen_orders
-- Subscribe this connection to hive_orders, the hint that an order was queued or released.
LISTEN hive_orders;

-- name: unlisten_orders
-- Unsubscribe this connection from hive_orders (no loop of the process listens for it any more).
UNLISTEN hive_orders;
