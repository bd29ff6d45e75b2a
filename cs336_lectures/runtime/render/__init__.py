"""Turning what a lecture shows into static pieces: markdown and math to HTML, highlighted
source, images and plots stored by content hash, SVG made passive, formulas as plain text."""
