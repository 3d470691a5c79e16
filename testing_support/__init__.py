"""Helpers for the tests, browser specs and benchmarks; not part of the kandev_web package or its wheel."""
