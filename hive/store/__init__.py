"""PostgreSQL: the pool, the migrations, the named queries, the embedded server."""
