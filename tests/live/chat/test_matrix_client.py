"""The hive's Matrix client against a real Synapse: a bot joins the room by its alias
and posts; the same transaction sent again posts nothing more."""

from hive.chat.matrix import DEPTH_KEY, TIMELINE_LIMIT, MatrixClient, MatrixError


def test_a_bot_joins_by_alias_and_posts_once_per_transaction(homeserver, person, bot):
    queen = bot("queen", "Queen")
    client = MatrixClient(homeserver.url, queen.access_token)
    assert client.whoami() == queen.user_id
    assert client.displayname(queen.user_id) == "Queen"
    room_id = client.join(person.alias)
    assert room_id == person.room_id
    content = {"msgtype": "m.notice", "body": "#3 merged", DEPTH_KEY: 1}
    first = client.send(room_id, "hive-outbox-1", content)
    again = client.send(room_id, "hive-outbox-1", content)
    assert again == first
    person.say("after the bot")
    seen = person.wait_for(lambda s: any(m.body == "after the bot" for m in s))
    from_bot = [m for m in seen if m.sender == queen.user_id]
    assert [(m.event_id, m.body, m.content[DEPTH_KEY]) for m in from_bot] == [
        (first, "#3 merged", 1)
    ]


def test_sync_from_a_token_gives_the_rooms_new_messages(homeserver, person, bot):
    queen = bot("queen", "Queen")
    client = MatrixClient(homeserver.url, queen.access_token)
    room_id = client.join(person.room_id)
    start = client.sync(room_id, None, 0)
    assert start.messages == ()
    said = person.say("@queen why #7?", **{"m.mentions": {"user_ids": [queen.user_id]}})
    page = client.sync(room_id, start.next_batch, 10_000)
    (message,) = page.messages
    assert (message.event_id, message.sender) == (said, person.user.user_id)
    assert message.body == "@queen why #7?"
    assert message.mentions == (queen.user_id,) and message.depth is None
    assert client.event(room_id, said) == message
    assert client.event(room_id, "$nosuchevent") is None


def test_a_bad_token_is_an_error_that_never_holds_it(homeserver):
    client = MatrixClient(homeserver.url, "syt_not_a_real_token_123")
    try:
        client.whoami()
    except MatrixError as err:
        assert err.status == 401 and err.errcode == "M_UNKNOWN_TOKEN"
        assert "syt_not" not in str(err) and "syt_not" not in repr(client)
    else:
        raise AssertionError("a bad token was taken")


def test_an_unreachable_homeserver_is_status_0():
    client = MatrixClient("http://127.0.0.1:9", "t", timeout_seconds=2)
    try:
        client.whoami()
    except MatrixError as err:
        assert err.status == 0 and "unreachable" in str(err)
    else:
        raise AssertionError("nothing answers on port 9")


def test_a_sync_after_more_than_a_page_reads_the_rest_back_in_order(homeserver, person, bot):
    queen = bot("queen", "Queen")
    client = MatrixClient(homeserver.url, queen.access_token)
    room_id = client.join(person.room_id)
    start = client.sync(room_id, None, 0)
    says = MatrixClient(homeserver.url, person.user.access_token)
    for n in range(TIMELINE_LIMIT + 30):
        says.send(room_id, f"many-{n}", {"msgtype": "m.text", "body": f"message {n}"})
    page = client.sync(room_id, start.next_batch, 0)
    assert not page.limited
    assert [m.body for m in page.messages] == [f"message {n}" for n in range(TIMELINE_LIMIT + 30)]
