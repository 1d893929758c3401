-- wrk script: POST a CouchDB Mango query (_find) for one value picked at random from a file
-- (one value per line), e.g. the orders of a company on pouchdb-server.
-- Usage: wrk -s find-random.lua http://127.0.0.1:PORT -- <path> <field> <values-file> [index-name]
--   e.g. -- /bench/_find Company values.txt by-company
-- Each wrk thread draws its own fixed sequence (seeded by the thread's number).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("number", threads)
end

local path, field, index
local values = {}
function init(args)
  path, field, index = args[1], args[2], args[4]
  for line in io.lines(args[3]) do
    if #line > 0 then values[#values + 1] = line end
  end
  math.randomseed(20261125 + (number or 0))
end
function request()
  local body = '{"selector":{"' .. field .. '":"' .. values[math.random(1, #values)] .. '"}'
  if index then body = body .. ',"use_index":"' .. index .. '"' end
  return wrk.format("POST", path, { ["Content-Type"] = "application/json" }, body .. "}")
end
