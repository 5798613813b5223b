"""Metric modules; importing this package registers every metric."""
