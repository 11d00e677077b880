"""The default confidence level, in a module of its own: the command line's help shows it without importing
numpy or scipy (:mod:`.intervals` re-exports both names)."""

#: the confidence level of every interval unless the user chooses another (dashboard sidebar, ``evalcore report
#: --level``, :class:`evalcore.report.sections.Settings`)
DEFAULT_LEVEL = 0.95
#: ``1 - DEFAULT_LEVEL`` for the functions that take ``alpha`` (rounded: ``1 - 0.95`` is 0.050000000000000044 in floats)
DEFAULT_ALPHA = round(1 - DEFAULT_LEVEL, 12)
