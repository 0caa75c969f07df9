"""Which lessons are about images: the visual rules of issue 19.

A rule whose text speaks of what an image shows ("the logo was cropped", "text over
the face", "brand colour wrong") is marked ``- Applies to: images`` when distillation
adds it (offline or by a model: both go through :mod:`scarwarden.distill.ops`), so
``audit-image`` sends it with every image whatever the task's words.

The test is a small word list, on purpose: a rule is visual when its title or text
holds one of :data:`VISUAL_WORDS` (compared after stemming, so "cropped" meets
"crop"). It is documented in docs/distill.md; a hand-written rule can always say
``- Applies to: images`` itself.
"""

from __future__ import annotations

from scarwarden import text

#: Words that make a lesson about what an image shows.
VISUAL_WORDS = (
    "image",
    "photo",
    "picture",
    "logo",
    "banner",
    "thumbnail",
    "screenshot",
    "crop",
    "cropped",
    "colour",
    "color",
    "pixel",
    "font",
    "typeface",
    "face",
    "overlay",
    "contrast",
    "visual",
    "illustration",
    "artwork",
    "watermark",
    "resolution",
)

_VISUAL_STEMS = frozenset(text.stems(" ".join(VISUAL_WORDS)))


def is_visual(*parts: str | None) -> bool:
    """Whether a lesson's title or text is about images (see :data:`VISUAL_WORDS`)."""
    return any(_VISUAL_STEMS.intersection(text.stems(part)) for part in parts if part)


def applies_to(*parts: str | None) -> tuple[str, ...]:
    """``("images",)`` for a visual lesson, else ``()``: what ``make_rule`` takes."""
    return ("images",) if is_visual(*parts) else ()
