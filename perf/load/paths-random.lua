-- wrk script: GET a path picked at random from a file of paths (one per line, already URL-encoded),
-- e.g. queries whose values vary: /databases/bench/queries?query=from%20Orders%20where%20...
-- Usage: wrk -s paths-random.lua http://127.0.0.1:PORT -- <paths-file>
-- Each wrk thread draws its own fixed sequence (seeded by the thread's number).
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("number", threads)
end

local paths = {}
function init(args)
  for line in io.lines(args[1]) do
    paths[#paths + 1] = line
  end
  math.randomseed(20261125 + (number or 0))
end
function request()
  return wrk.format("GET", paths[math.random(1, #paths)])
end
