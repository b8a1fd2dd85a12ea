"""BlitzACO's data files, installed as the package ``blitzaco.assets`` so that an
installed engine finds them with importlib.resources."""
