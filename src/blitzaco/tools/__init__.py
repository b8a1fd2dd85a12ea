"""What sits on top of the engine and is never imported by it: the bench and perft
commands, game analysis, colony training of the pheromone memory, EPD suites, the
Polyglot book writer, the match runner and the weight tuner (torch lives only in
``tune``). ``tests/test_layering.py`` checks that importing the engine loads none of
these modules."""
