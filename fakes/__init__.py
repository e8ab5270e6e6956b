"""Fakes of the chat platforms' servers, driven by the real client libraries in tests.

The platforms cannot be reached from the test machines, so each fake reproduces the server side
(limits, error codes, payload shapes) closely enough that the adapters can be tested against it.
"""
