"""The default confidence level, and how a level is written (:func:`percent`), in a module of its own: the command
line's help and its text show them without importing numpy, scipy or plotly (:mod:`.intervals` re-exports both
level names, :mod:`.figures` re-exports :func:`percent`)."""

#: the confidence level of every interval unless the user chooses another (dashboard sidebar, ``evalcore report
#: --level``, :class:`evalcore.report.sections.Settings`)
DEFAULT_LEVEL = 0.95
#: ``1 - DEFAULT_LEVEL`` for the functions that take ``alpha`` (rounded: ``1 - 0.95`` is 0.050000000000000044 in floats)
DEFAULT_ALPHA = round(1 - DEFAULT_LEVEL, 12)


def percent(level: float) -> str:
    """0.95 -> '95%', 0.834 -> '83.4%'."""
    return f"{100 * level:.1f}".rstrip("0").rstrip(".") + "%"
