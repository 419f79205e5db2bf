"""Durable jobs (RULES 10): the engine that runs their steps through the effects journal
(`engine`, with what a run learned in `memo`), and the publish job's steps (`publish`),
its port to a forge (`forge_steps`) and an attempt's head in the Queen's clone (`heads`)."""
