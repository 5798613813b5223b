"""Scoring backends, loaded once per process."""
