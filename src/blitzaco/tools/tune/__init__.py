"""Weight tuning: a genetic algorithm and simulated annealing over config.toml's
weights, with two fitness functions (mini-matches at fixed nodes, or the Texel
error on labelled positions from the engine's own games), on one machine or a Ray
cluster.

The engine never imports this package (torch lives here). Front end:
``scripts/tune.py``. Modules:

* :mod:`blitzaco.tools.tune.spec`: the tuning spec file and the genome (which weights,
  their bounds, config <-> vector);
* :mod:`blitzaco.tools.tune.positions`: self-play games, the labelled position set and its
  feature traces;
* :mod:`blitzaco.tools.tune.fitness`: the two fitness functions;
* :mod:`blitzaco.tools.tune.optimise`: the genetic algorithm and simulated annealing, with
  checkpoints, a CSV log, a plot and a progress bar;
* :mod:`blitzaco.tools.tune.adopt`: writes tuned weights into the defaults' data
  file, the top-level ``config.toml``.
"""
