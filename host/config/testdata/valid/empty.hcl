# An empty file is a valid configuration: every attribute has a default.
