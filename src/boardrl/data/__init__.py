"""The UCI Connect-4 data set.

``uci_download``: fetch from the official address or the vendored copy, verify sha256, decompress ``.Z``.
``uci_table``: parse into a pandas table, check the published facts and the equality with the rules.
"""
