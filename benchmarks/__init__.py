"""Performance benchmarks of evalcore and the dashboard: ``python -m benchmarks.run`` prints a table of medians.

Benchmarks report timings against the targets of the performance issue; they never assert on them (timings depend
on the machine), so they live outside the test suite.
"""
