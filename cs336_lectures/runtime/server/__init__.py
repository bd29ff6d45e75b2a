"""`cs336-lectures serve` behind the command line: the local HTTP server and its guards
(http_server), re-tracing on save and what it publishes (retracing), the event stream to open
viewers (events), reading and saving a lecture's source (source_files), watching files (watch)."""
