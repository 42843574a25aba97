"""Tests of mcpkit_remember through the real HTTP stack and at unit level."""
