-- name: listen_orders
-- Subscribe this connection to hive_orders, the hint that an order was queued or released.
LISTEN hive_orders;

-- name: notify_order_ended
-- Tell the listeners an order ended (its key and boundary are free), so a Queen elsewhere rounds at once.
SELECT pg_notify('hive_orders', %(issue)s::text);
