"""The warm kernel behind `serve`: a process per lecture that forks runs and checkpoints
(process), the wire between it and the server (protocol), the server's handle on it (client),
and what an edit changed (edits)."""
