-- wrk script: the PUT load of put-new.lua or the GET load of paths-random.lua, recording when each
-- answer arrived (CLOCK_MONOTONIC, ns, the clock of Python's time.monotonic()) and its status, one
-- line per answer into <out-prefix><thread number>: throughput can then be taken over part of a run
-- (perf/load/replacement.sh: while a replacement builds, up to the moment it swapped in).
-- Usage: wrk -s load-timed.lua http://127.0.0.1:PORT -- put <path-prefix> <out-prefix>
--        wrk -s load-timed.lua http://127.0.0.1:PORT -- paths <paths-file> <out-prefix>
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } jd_timespec;
  int clock_gettime(int clock, jd_timespec *ts);
]]
local ts = ffi.new("jd_timespec")
local function now() -- ns since boot (CLOCK_MONOTONIC = 1)
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1e9 + tonumber(ts.tv_nsec)
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("number", threads)
end

local mode, prefix, out
local paths = {}
local counter = 0
local thread_tag
local filler = string.rep("lorem ipsum dolor sit amet ", 34)
function init(args)
  mode = args[1]
  if mode == "put" then
    prefix = args[2]
  else
    for line in io.lines(args[2]) do
      paths[#paths + 1] = line
    end
  end
  math.randomseed(os.time() + math.floor(os.clock() * 1e6) + (number or 0))
  thread_tag = tostring(math.random(1, 1e9))
  if mode ~= "put" then math.randomseed(20261125 + (number or 0)) end
  out = assert(io.open(args[3] .. (number or 0), "w"))
  out:setvbuf("full")
end

function request()
  if mode == "put" then
    counter = counter + 1
    local body = '{"Name":"customer ' .. counter .. '","Thread":"' .. thread_tag .. '","Counter":' .. counter ..
      ',"Text":"' .. filler .. '","@metadata":{"@collection":"Bench"}}'
    return wrk.format("PUT", prefix .. thread_tag .. "-" .. counter, { ["Content-Type"] = "application/json" }, body)
  end
  return wrk.format("GET", paths[math.random(1, #paths)])
end

function response(status, headers, body)
  out:write(string.format("%.0f %d\n", now(), status))
end
