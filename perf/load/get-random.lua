-- wrk script: GET a random document by id out of DOCS (default 10000) documents.
-- Usage: wrk -s get-random.lua http://127.0.0.1:PORT -- <path-prefix> [docs]
--   Jackdaw:       -- "/databases/bench/docs?id=docs/"
--   pouchdb-server -- "/bench/docs%2F"
local prefix, count
function init(args)
  prefix = args[1] or "/databases/bench/docs?id=docs/"
  count = tonumber(args[2] or "10000")
  math.randomseed(20261122 + (wrk.thread and 0 or 0))
end
function request()
  return wrk.format("GET", prefix .. math.random(1, count))
end
