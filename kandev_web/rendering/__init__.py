"""Agent text made into what the operator reads: safe HTML, diffs, terminal output.

Pure functions without Django (an import-linter contract keeps it so), so
they are tested on their own and any layer may use them. Agent text is
hostile: nothing here lets markup from an agent become HTML.
"""
