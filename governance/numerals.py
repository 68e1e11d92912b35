"""Numbers typed as text: a form field, a query parameter, an address's segment."""


def numeral(text: str, max_digits: int) -> int | None:
    """The number `text` writes in at most `max_digits` ASCII digits; None for anything else.

    `str.isdigit` alone also accepts "²" and other digits `int` refuses, and a number of
    thousands of digits that `int` refuses too: each was a 500 where it guarded an `int()`.
    """
    if text.isascii() and text.isdigit() and len(text) <= max_digits:
        return int(text)
    return None
