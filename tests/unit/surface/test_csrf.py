"""The board's per-page CSRF tokens: fresh for each page, checked by their mac under a
key drawn from the API token, good for twelve hours."""

from hive.http.csrf import TOKEN_MAX_SECONDS, PageTokens


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_is_fresh_per_page_and_valid_where_the_same_api_token_is_held():
    clock = Clock()
    tokens = PageTokens("secret", clock)
    first, second = tokens.make(), tokens.make()
    assert first != second
    assert tokens.valid(first) and tokens.valid(second)
    assert PageTokens("secret", clock).valid(first)  # another Queen behind the Service
    assert not PageTokens("other", clock).valid(first)


def test_a_token_goes_stale_and_a_changed_one_fails():
    clock = Clock()
    tokens = PageTokens("secret", clock)
    token = tokens.make()
    nonce, issued, mac = token.split(".")
    assert not tokens.valid(f"{nonce}.{int(issued) + 1}.{mac}")
    assert not tokens.valid(f"{'f' * 32}.{issued}.{mac}")
    assert not tokens.valid(f"{nonce}.{issued}.{mac[:-1]}")
    clock.now += TOKEN_MAX_SECONDS
    assert tokens.valid(token)
    clock.now += 1
    assert not tokens.valid(token)
    clock.now -= TOKEN_MAX_SECONDS + 2  # issued in the future: a clock gone back
    assert not tokens.valid(token)


def test_junk_is_never_valid():
    tokens = PageTokens(None)
    for junk in (None, "", "x", "a.b.c", "a.²." + "0" * 64, "é.1.2", "a." * 200, "\udcff.1.x"):
        assert not tokens.valid(junk)
    assert tokens.valid(tokens.make())
    assert not PageTokens(None).valid(tokens.make())  # no token: a key of its own
