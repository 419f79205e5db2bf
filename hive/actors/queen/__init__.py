"""The Queen: she decides which issue goes next, on which key, and writes the order.

- `queen`: Queen (her rounds) and QueenActor
- `config`: what she is given (her ports and config)
- `facts`: what a round reads before it asks the rules
- `dispatch`: one planned order written and, in local mode, its bee started
- `credit_gate`: the credit facts a round reads
"""
