"""Recording a trace: the line tracer (engine), tracing one lecture file (lecture_run), its
result, the supervised child process that enforces limits (supervisor), and the processes a
lecture starts (ranks)."""

# One limit for `trace`, `serve` and batch jobs, so that a re-trace stops where a plain trace
# would: a real lecture takes thousands of steps, and a loop that runs away stops within
# seconds, before its steps fill the memory (a million take a few hundred megabytes).
DEFAULT_MAX_STEPS = 1_000_000
