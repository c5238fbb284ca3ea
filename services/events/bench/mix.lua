-- wrk script of the read/write mix (bench/mix.bench.ts): ids and pages drawn uniformly over the
-- whole range, 5% writes (3% PUT, 2% DELETE) on 1,000 ids of the bench writer, interleaved.
local mode = os.getenv("MIX_MODE")
local events = tonumber(os.getenv("MIX_EVENTS"))
local pages = tonumber(os.getenv("MIX_PAGES"))
local auth = "Bearer " .. os.getenv("MIX_TOKEN")
local body = '{"name":"written","body":"# mix","date":"2026-05-01T10:00:00Z"}'
local put_headers = { ["Authorization"] = auth, ["Content-Type"] = "application/json" }
local delete_headers = { ["Authorization"] = auth }

init = function(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 1000)
end

request = function()
  local r = math.random()
  if r < 0.03 then
    return wrk.format("PUT", "/events/w-" .. math.random(1, 1000), put_headers, body)
  elseif r < 0.05 then
    return wrk.format("DELETE", "/events/w-" .. math.random(1, 1000), delete_headers)
  elseif mode == "one" then
    return wrk.format("GET", "/events/bench-" .. math.random(1, events))
  end
  return wrk.format("GET", "/events?limit=100&page=" .. math.random(1, pages))
end
