"""Notes and knowledge: frontmatter parsing, safe vault paths, the notes search index."""
