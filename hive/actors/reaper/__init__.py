"""The reapers: they clean up after crashes.

- `reaper`: Reaper (the boot pass, asked; the stall pass) and ReaperActor
- `refused`: the queued orders every runner refused, ended after the silent window
"""
