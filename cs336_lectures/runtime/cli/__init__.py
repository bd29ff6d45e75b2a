"""The command line: `cs336-lectures trace | serve | build | show | export | import | i18n`
(main), batch jobs on Slurm or locally (batch), and `cs336-lectures jobs` (jobs)."""
