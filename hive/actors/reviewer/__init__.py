"""The reviewer: finished work judged, and what a verdict leads to.

- `reviewer`: Reviewer and ReviewerActor
- `config`: its ports and config
- `inputs`: what a review needs beside its reviewer, and what it leaves on the order
- `verdicts`: what a verdict leads to (a publish job, a round at once)
"""
