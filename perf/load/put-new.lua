-- wrk script: PUT new ~1 KiB documents with unique ids.
-- Usage: wrk -s put-new.lua http://127.0.0.1:PORT -- <path-prefix>
--   Jackdaw:       -- "/databases/bench/docs?id=new/"
--   pouchdb-server -- "/bench/new%2F"
local prefix
local counter = 0
local thread_tag = tostring(math.random(1, 1e9))
local filler = string.rep("lorem ipsum dolor sit amet ", 34)
function init(args)
  prefix = args[1] or "/databases/bench/docs?id=new/"
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  thread_tag = tostring(math.random(1, 1e9))
end
function request()
  counter = counter + 1
  local body = '{"Name":"customer ' .. counter .. '","Thread":"' .. thread_tag .. '","Counter":' .. counter ..
    ',"Text":"' .. filler .. '","@metadata":{"@collection":"Bench"}}'
  return wrk.format("PUT", prefix .. thread_tag .. "-" .. counter, { ["Content-Type"] = "application/json" }, body)
end
