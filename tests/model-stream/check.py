"""Reads the reference peer's scripted model with the official `openai` client, so its stream is
checked against a real client and not only against our own reader.

Usage: check.py PEER_URL TOKEN, against `cargo run -p lembas-peer --example scripted_model_server`,
whose queued replies are read here in order (scripts/check-model-stream runs both).
"""

import json
import sys

import openai
from openai import OpenAI

MODEL = "example/chat-fast"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a command",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            },
        },
    },
]


def stream(client, text):
    return client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": text}],
        tools=TOOLS,
        tool_choice="auto",
        stream=True,
        stream_options={"include_usage": True},
    )


def read_all(chunks):
    """What a client assembles: content, reasoning, tool calls by index, finish reason, usage."""
    content, reasoning, calls, finish, usage, count = [], [], {}, None, None, 0
    for chunk in chunks:
        count += 1
        assert chunk.object == "chat.completion.chunk", chunk
        if chunk.usage is not None:
            assert chunk.choices == [], chunk
            usage = chunk.usage
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        if delta.content:
            content.append(delta.content)
        # Not in the typed model: the client keeps unknown fields as extras.
        extra = (delta.model_extra or {}).get("reasoning_content")
        if extra:
            reasoning.append(extra)
        for call in delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": None, "name": None, "arguments": []})
            if call.id:
                entry["id"] = call.id
            if call.function and call.function.name:
                entry["name"] = call.function.name
            if call.function and call.function.arguments:
                entry["arguments"].append(call.function.arguments)
        if choice.finish_reason:
            finish = choice.finish_reason
    return content, reasoning, calls, finish, usage, count


def main():
    url, token = sys.argv[1], sys.argv[2]
    client = OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0)

    content, _, _, finish, usage, count = read_all(stream(client, "say hello"))
    text = "".join(content)
    assert text == "Hello from the scripted model, streamed in pieces.", text
    assert len(content) > 3 and finish == "stop", (content, finish)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0, usage
    print(f"text: {text!r} in {len(content)} pieces ({count} chunks), finish {finish}, usage {usage.model_dump()}")

    content, reasoning, _, finish, _, _ = read_all(stream(client, "2+2?"))
    thought = "".join(reasoning)
    assert thought == "The user wants a number; two and two make four.", thought
    assert "".join(content) == "4" and finish == "stop"
    print(f"reasoning: {thought!r} in {len(reasoning)} pieces, then text {''.join(content)!r}")

    _, _, calls, finish, _, _ = read_all(stream(client, "look around"))
    assert finish == "tool_calls", finish
    assert sorted(calls) == [0, 1], calls
    expected = [
        ("call_read", "read", {"path": "docs/naïve café.md"}),
        ("call_bash", "bash", {"command": "ls -la | head -3", "description": "List the folder"}),
    ]
    for index, (id_, name, arguments) in enumerate(expected):
        call = calls[index]
        parsed = json.loads("".join(call["arguments"]))
        assert (call["id"], call["name"], parsed) == (id_, name, arguments), call
        assert len(call["arguments"]) > 2, call
        print(f"tool call {index}: {call['id']} {call['name']}({parsed}) from {len(call['arguments'])} fragments {call['arguments']}")

    try:
        read_all(stream(client, "once more"))
        raise AssertionError("a 429 was expected")
    except openai.RateLimitError as error:
        assert error.status_code == 429
        assert error.response.headers.get("retry-after") == "3", error.response.headers
        assert error.code == "rate_limit_exceeded", error.body
        print(f"429: RateLimitError, Retry-After {error.response.headers['retry-after']}, message {error.message!r}")

    received, failure = [], None
    try:
        for chunk in stream(client, "a cut one"):
            if chunk.choices and chunk.choices[0].delta.content:
                received.append(chunk.choices[0].delta.content)
    # Whatever the client's HTTP layer raises for a body cut short (its module differs by version).
    except Exception as error:  # noqa: BLE001
        failure = error
    assert failure is not None, "the cut stream ended cleanly"
    assert "".join(received) == "This answer is cut", received
    print(f"cut: {''.join(received)!r}, then {type(failure).__module__}.{type(failure).__name__}: {failure}")

    # The queue is empty now: the demo answers.
    _, _, calls, finish, _, _ = read_all(stream(client, "run echo hi"))
    call = calls[0]
    parsed = json.loads("".join(call["arguments"]))
    assert finish == "tool_calls" and call["name"] == "bash", (finish, call)
    assert parsed == {"command": "echo hi", "description": "Run what you asked"}, parsed
    print(f"demo: {call['id']} {call['name']}({parsed})")

    print(f"all checks passed with openai {openai.__version__}")


if __name__ == "__main__":
    main()
