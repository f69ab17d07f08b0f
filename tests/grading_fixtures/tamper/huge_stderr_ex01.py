"""Tamper: a 1 MB line on stderr, then a hard exit."""
import os
import sys

sys.stderr.write("x" * (1 << 20))
sys.stderr.flush()
os._exit(3)
