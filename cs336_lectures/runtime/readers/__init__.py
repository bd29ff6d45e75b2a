"""Readers of a finished trace outside the browser: the navigation rules shared with the
viewer (navigation) and the terminal viewer `cs336-lectures show` (terminal)."""
