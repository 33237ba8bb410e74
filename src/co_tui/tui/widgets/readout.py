"""Readout: a Static for text that changes often (a counter, a status list) whose updates lay
the screen out again only when they change its height.

In Textual any layout request reflows every widget on the screen, the whole transcript
included, and repaints what moved; `Static.update` asks for one every time. New words in
the same number of lines need only this widget repainted.
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


class Readout(Static):
    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        super().update(content, layout=False)
        if layout and self._size_may_change():
            self.refresh(layout=True)

    def _size_may_change(self) -> bool:
        width, height = self.content_size
        if not width:
            return True  # not laid out yet, or hidden: nothing to compare with
        if self.styles.width is not None and self.styles.width.is_auto:
            return True  # its width follows its words
        return self.get_content_height(self.size, self.app.size, width) != height
