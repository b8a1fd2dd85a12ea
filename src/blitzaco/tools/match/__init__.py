"""Engine-versus-engine matches: the tool that judges every strength change.

The engine never imports this package; ``scripts/match.py`` is its front end.
"""
