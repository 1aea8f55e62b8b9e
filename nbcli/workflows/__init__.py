"""Workflows: what each command does, as plain functions that return reports.

A workflow takes paths (or loaded model files) and options, and returns a
report object from :mod:`nbcli.reports`; it never prints and never parses
command-line options. Progress and warnings go to a
:class:`~nbcli.workflows.engine.Reporter`; independent tasks run on an
engine (:class:`~nbcli.engines.local.LocalEngine` by default, or the Dask
engine of :mod:`nbcli.engines`).

Import the functions from their modules (``from nbcli.workflows.evaluate
import evaluate``): this package imports nothing heavy itself, so that
``nbcli --help`` stays fast.
"""
