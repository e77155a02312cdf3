"""The command line: one function per command, and the demo."""
