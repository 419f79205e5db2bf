"""Use cases shared by the command line and the HTTP server.

Each use case is one function over the store (`db`: a pool on the server's request
threads, one connection for a command), in the module of its noun: `issues`, `orders`,
`export`, `status`; a person's verbs in `judgement` (approve, reject), `changes` (close,
reopen, edit, block), `history` (why, the transcript) and `detail` (one issue, all of
it), with `standing` saying where an issue's work stands. A refusal is a `ServiceError`
subclass that carries both answers, the HTTP status and the exit code, so a new verb and a
new route only call the function.
"""
