"""BlitzACO: a UCI chess engine in Python."""

__version__ = "0.1.0"
ENGINE_NAME = "BlitzACO"
ENGINE_AUTHOR = "the BlitzACO developers"
