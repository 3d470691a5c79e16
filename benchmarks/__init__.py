"""Benchmarks for kandev-web (issue 7): plain scripts, not tests. See BENCHMARKS.md.

Run each as ``.venv/bin/python -m benchmarks.<name>`` from the repository root
(or ``benchmarks/<name>.py``): ``latency``, ``board``, ``concurrency``, ``soak``.
"""
