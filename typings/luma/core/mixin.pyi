# Stubs for luma.core 2.6.0 (the parts the project calls), from luma/core/mixin.py.
from PIL.Image import Image

class capabilities:
    width: int
    height: int
    size: tuple[int, int]
    rotate: int
    mode: str
    def clear(self) -> None: ...
    def display(self, image: Image) -> None: ...
