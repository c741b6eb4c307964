"""``streamproof explore``: search fault plans with hypothesis and write the smallest failing
scenario.

:mod:`streamproof.explore.space` holds the pure part (the strategies over a scenario's links),
:mod:`streamproof.explore.reproducer` turns a found plan into a scenario file, and
:mod:`streamproof.explore.search` runs the search against one started environment: what it is
asked is checked in :mod:`streamproof.explore.options`, the scenario it runs is loaded by
:mod:`streamproof.explore.scenario`, and :mod:`streamproof.explore.explorer` runs each example
and remembers what it broke.
"""
