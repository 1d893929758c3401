-- wrk script: GET a path picked at random from a file of paths (as paths-random.lua), and record
-- every request: when it started (CLOCK_MONOTONIC, ns, the clock of Python's time.monotonic()),
-- its latency (µs) and its status, one line each, into <out-prefix><thread number>.
-- Run it with one connection per thread (-tN -cN): request() and response() then pair exactly.
-- A request lost to a socket error has no line (wrk's "Socket errors" line counts those).
-- Usage: wrk -t16 -c16 -s paths-timed.lua http://127.0.0.1:PORT -- <paths-file> <out-prefix>
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } jd_timespec;
  int clock_gettime(int clock, jd_timespec *ts);
]]
local ts = ffi.new("jd_timespec")
local function now() -- ns since boot (CLOCK_MONOTONIC = 1), exact in a double for years
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1e9 + tonumber(ts.tv_nsec)
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("number", threads)
end

local paths = {}
local out
local started = 0
function init(args)
  for line in io.lines(args[1]) do
    paths[#paths + 1] = line
  end
  math.randomseed(20261126 + (number or 0))
  out = assert(io.open(args[2] .. (number or 0), "w"))
  out:setvbuf("full")
end

function request()
  started = now()
  return wrk.format("GET", paths[math.random(1, #paths)])
end

function response(status, headers, body)
  out:write(string.format("%.0f %.0f %d\n", started, (now() - started) / 1e3, status))
end
