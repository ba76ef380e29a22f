"""Providers that talk to real model servers."""
