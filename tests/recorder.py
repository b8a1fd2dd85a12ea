"""A reporter for tests that call the engine directly: keeps every info and message."""

from __future__ import annotations

from blitzaco.engine import Reporter, SearchInfo


class Recorder(Reporter):
    def __init__(self) -> None:
        self.infos: list[SearchInfo] = []
        self.messages: list[str] = []

    def info(self, info: SearchInfo) -> None:
        self.infos.append(info)

    def message(self, text: str) -> None:
        self.messages.append(text)
