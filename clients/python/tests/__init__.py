"""Tests of the sparrowfleet package; run by make test-python."""
