"""The runtime: primitives and directives, the tracer and its value encoder, the trace format,
rendering and assets, the local server, static export and the command line.

Lectures import the primitives from the package root (``from cs336_lectures import text``);
the modules here are the machinery behind them.
"""
