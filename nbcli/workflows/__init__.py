"""Workflows: plain functions between the command line and the core, returning reports."""
