-- wrk script: PUT ~1 KiB documents over a fixed set of ids, chosen at random, so the same
-- documents are written again and again (revisions pile up to their limit and are purged).
-- Usage: wrk -s put-update.lua http://127.0.0.1:PORT -- <database> [ids]     ids default 2000
local db, ids
local counter = 0
local filler = string.rep("lorem ipsum dolor sit amet ", 34)
function init(args)
  db = args[1] or "bench"
  ids = tonumber(args[2] or "2000")
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end
function request()
  counter = counter + 1
  local n = math.random(0, ids - 1)
  local body = '{"Name":"customer ' .. n .. '","Counter":' .. counter ..
    ',"Text":"' .. filler .. '","@metadata":{"@collection":"Bench"}}'
  return wrk.format("PUT", "/databases/" .. db .. "/docs?id=bench/" .. n, { ["Content-Type"] = "application/json" }, body)
end
