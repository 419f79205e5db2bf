-- name: listen_orders
-- Subscribe this connection to hive_orders, the hint that an order was queued or released.
LISTEN hive_orders;

