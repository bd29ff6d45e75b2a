"""The Stanford course's own lectures and traces: its `execute_util` interface over our
primitives (compat) and the import of its traces (importer, with stacks, renderings and files)."""
