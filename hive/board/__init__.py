"""The board (DESIGN 10): a page with a column per stage of an issue's life, kept live by
server-sent events fed from LISTEN/NOTIFY, and a page per issue.

`Board(db, url)` is what the HTTP routes read: the pages as HTML, the fragments an open
page fetches again, and the event streams (`hub.Hub`). The HTML is made on the server
(`render`, `issue_page`): the page's script only puts fragments in place, so there is no
build step and no framework, and every text from the store is escaped in one place.
"""

from hive.board.source import Board

__all__ = ["Board"]
