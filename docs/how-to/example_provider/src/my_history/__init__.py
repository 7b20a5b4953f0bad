"""Notes about a project's files, kept in its repository, briefed to agents by Karni."""
