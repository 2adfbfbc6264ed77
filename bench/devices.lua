-- wrk script: proxied GETs spread over many devices, one session each, rotated per request.
--   KEYWARD_TOKENS=tokens.txt (one session token per line) KEYWARD_PATH=/p/bench/v1/models \
--   wrk -t2 -c64 -d10s -s bench/devices.lua http://127.0.0.1:8080
-- Every request is formatted once per thread up front, so rotating costs wrk no more than a
-- fixed header.
local file = os.getenv("KEYWARD_TOKENS") or error("set KEYWARD_TOKENS to a file of session tokens")
local path = os.getenv("KEYWARD_PATH") or error("set KEYWARD_PATH, e.g. /p/bench/v1/models")
local requests = {}
local next_index = 0

function init(args)
  -- wrk has set the Host header by now (it calls this from its own init).
  local host = wrk.headers["Host"]
  for token in io.lines(file) do
    if #token > 0 then
      requests[#requests + 1] = wrk.format("GET", path, { ["Host"] = host, ["Authorization"] = "Bearer " .. token })
    end
  end
  if #requests == 0 then error("no tokens in " .. file) end
  -- Threads start at different devices, so they do not march in step.
  next_index = (tonumber(tostring({}):match("0x(%x+)"), 16) or 0) % #requests
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end
