-- wrk script: proxied calls with a session, as an app would make them.
--   KEYWARD_TOKEN=$(keyward sessions mint --device load-test-1 --register --ttl 3600 --token-only) \
--   KEYWARD_PATH=/p/openai/v1/chat/completions KEYWARD_BODY='{"model":"gpt-4o-mini","messages":[]}' \
--   wrk -t2 -c32 -d30s -s bench/session.lua https://keyward.example.com
-- KEYWARD_METHOD defaults to POST when a body is given, GET otherwise. wrk reports non-2xx answers
-- (429 = the per-device rate limit of providers.toml: use several minted devices for more load).
local token = os.getenv("KEYWARD_TOKEN") or error("set KEYWARD_TOKEN (keyward sessions mint --token-only)")
local path = os.getenv("KEYWARD_PATH") or error("set KEYWARD_PATH, e.g. /p/openai/v1/chat/completions")
local body = os.getenv("KEYWARD_BODY")
local method = os.getenv("KEYWARD_METHOD") or (body and "POST" or "GET")

wrk.method = method
wrk.path = path
wrk.body = body
wrk.headers["Authorization"] = "Bearer " .. token
if body then wrk.headers["Content-Type"] = "application/json" end
