"""What a lecture calls: the primitives (`text`, `image`, `link`, `plot`, `solution`) and the
directives read from its comments (`# @inspect`, `# @clear`, `# @stepover`, `# @hide`)."""
