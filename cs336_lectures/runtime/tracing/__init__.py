"""Recording a trace: the line tracer and `trace_lecture` (engine), the supervised child
process that enforces limits (supervisor), and the processes a lecture starts (ranks)."""
