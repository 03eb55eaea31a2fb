"""Aligned text tables as mqadmin prints them: ``#``-prefixed headers, columns padded to their
widest cell, two spaces between columns, numbers right-aligned under their header."""

from __future__ import annotations

from collections.abc import Sequence

Cell = str | int | float | None


def _text(cell: Cell) -> str:
    if cell is None:
        return "N/A"
    if isinstance(cell, float):
        return f"{cell:.2f}"
    return str(cell)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """The table as lines; ``headers`` get a leading ``#`` as in mqadmin's output."""
    names = [h if h.startswith("#") else f"#{h}" for h in headers]
    texts = [[_text(c) for c in row] for row in rows]
    numeric = [
        bool(rows) and all(isinstance(row[i], int | float) for row in rows)
        for i in range(len(names))
    ]
    widths = [max([len(names[i]), *(len(r[i]) for r in texts)]) for i in range(len(names))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(names), *(line(r) for r in texts)])


def format_pairs(pairs: Sequence[tuple[str, Cell]], *, separator: str = ": ") -> str:
    """``key: value`` lines with the keys padded to the longest (mqadmin's brokerStatus)."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{k.ljust(width)}{separator}{_text(v)}" for k, v in pairs)
