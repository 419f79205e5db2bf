"""Durable jobs (RULES 10): the engine that runs their steps through the effects journal."""
