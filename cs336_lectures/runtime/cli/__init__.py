"""The command line: `cs336-lectures trace | serve | build | show | export | import | i18n | jobs`
(main parses and dispatches; serve starts the server), batch jobs on Slurm or locally (batch),
and `cs336-lectures jobs` (jobs)."""
