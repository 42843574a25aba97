"""Shared fixtures for mcpkit's own test suite."""

pytest_plugins = ["redis_fixtures", "redis_cluster_fixtures", "postgres_fixtures"]
