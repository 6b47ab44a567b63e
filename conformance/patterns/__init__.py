"""Layer patterns: small multi-node graphs in the forms exporters emit for one layer (issue 26).

:mod:`conformance.patterns.core` holds the pattern entry (:class:`~.core.Pattern`), the graph a
pattern case carries (:class:`~.core.PatternGraph`), the composed float64 evaluator and the
derived tolerance; one module per pattern family registers its patterns
(:func:`~.core.register_patterns`).  docs/patterns.md explains how to write one.
"""
