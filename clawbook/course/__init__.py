"""The course data and what reads it.

The chapter list, the stub generator, the starter's stubs and backups, the lesson reader, and the
hooks that render the book.
"""
