"""The chat (DESIGN 11, agents among themselves): one bot per agent in one Matrix room."""
