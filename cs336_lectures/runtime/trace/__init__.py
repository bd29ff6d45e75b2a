"""The trace as data: its JSON format (write, read, validate), the bounded encoding of values,
values as plain text, and the comparison of two traces."""
