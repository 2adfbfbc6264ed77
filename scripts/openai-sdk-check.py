"""Calls a Keyward-fronted OpenAI provider with the official OpenAI Python SDK, unchanged: the SDK's
base URL is Keyward's /p/<provider>/v1 and its API key is the Keyward session (the SDK sends it as
`Authorization: Bearer`, which is what Keyward expects). One plain call and one streamed call;
prints one JSON line with what the SDK read, for the Swift test that runs it (OpenAISDKTests).

Environment: KEYWARD_BASE_URL (e.g. http://127.0.0.1:8080/p/openai/v1), KEYWARD_TOKEN, MODEL.
"""
import json
import os

import openai

client = openai.OpenAI(base_url=os.environ["KEYWARD_BASE_URL"], api_key=os.environ["KEYWARD_TOKEN"], max_retries=0, timeout=20)
model = os.environ["MODEL"]
messages = [{"role": "user", "content": "Say hello."}]

plain = client.chat.completions.create(model=model, messages=messages)
streamed_text = []
streamed_usage = None
chunks = 0
for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
    chunks += 1
    for choice in chunk.choices:
        if choice.delta.content:
            streamed_text.append(choice.delta.content)
    if chunk.usage is not None:
        streamed_usage = [chunk.usage.prompt_tokens, chunk.usage.completion_tokens]

print(json.dumps({
    "sdk": openai.__version__,
    "plain_text": plain.choices[0].message.content,
    "plain_usage": [plain.usage.prompt_tokens, plain.usage.completion_tokens],
    "streamed_text": "".join(streamed_text),
    "streamed_usage": streamed_usage,
    "chunks": chunks,
}))
