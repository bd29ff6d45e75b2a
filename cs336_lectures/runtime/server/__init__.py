"""`cs336-lectures serve`: the local HTTP server and its re-tracing on save (http_server),
reading and saving a lecture's source (source_files), and watching files (watch)."""
