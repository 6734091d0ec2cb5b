"""A table's height: its header and every row shown, up to a cap."""

from __future__ import annotations

from mha_app.ui.layout import ROW_PX, table_height


def test_a_table_shows_its_header_and_every_row():
    assert table_height(11) == 12 * ROW_PX + 3 == 423
    assert table_height(0) == ROW_PX + 3


def test_a_cap_makes_a_long_table_scroll():
    assert table_height(11, cap=420) == 420
    assert table_height(5, cap=420) == 6 * ROW_PX + 3
