-- name: listen_orders
-- Subscribe this connection to hive_orders, the hint that an order was queued or released.
LISTEN hive_orders;

-- name: notify_order_ended
-- Tell the listeners an order ended (its key and boundary are free), so a Queen elsewhere rounds at once; the payload 'ended:N' lets a runner's claimer sleep on (nothing became claimable).
SELECT pg_notify('hive_orders', 'ended:' || %(issue)s::text);
