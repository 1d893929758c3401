-- wrk script: updates the same documents over and over, each exactly ROUNDS times (issue 29's
-- minimal incremental workload). Each thread owns the documents whose index % threads is its
-- number and PUTs them round by round; once its share is sent it sends only GET /build/version
-- (harmless, answered 200 where a PUT is answered 201, one per 10 ms a connection). When every PUT of a thread is answered
-- it appends a line to DONE-FILE; the thread that finds a line per thread there ends wrk
-- (os.exit: wrk itself would wait out -d). Run it with a -d longer than the work takes.
-- Usage: wrk -tT -c16 -d10m -s put-same.lua http://127.0.0.1:PORT -- <db> <bodies-file> <rounds> <done-file> <T>
--   bodies-file: one line per document, "<id> <its JSON without the closing brace>"
local counter = 0
function setup(thread)
  thread:set("number", counter)
  counter = counter + 1
end

local db, ids, bodies, rounds, done, threads, started, sent, answered, total
function init(args)
  db, rounds, done, threads = args[1], tonumber(args[3]), args[4], tonumber(args[5])
  local count = 0
  ids, bodies = {}, {}
  for line in io.lines(args[2]) do
    if count % threads == number then
      local space = line:find(" ")
      table.insert(ids, line:sub(1, space - 1))
      table.insert(bodies, line:sub(space + 1))
    end
    count = count + 1
  end
  sent, answered, total = 0, 0, #ids * rounds
end

function request()
  -- wrk calls the first thread's request() once before the run to check it, and sends nothing:
  -- the first call in every thread is a GET, so none of the PUTs is lost.
  if not started then
    started = true
    return wrk.format("GET", "/build/version")
  end
  if sent >= total then
    return wrk.format("GET", "/build/version")
  end
  local i = sent % #ids + 1
  local round = math.floor(sent / #ids) + 1
  sent = sent + 1
  return wrk.format("PUT", "/databases/" .. db .. "/docs?id=" .. ids[i], { ["Content-Type"] = "application/json" },
    bodies[i] .. ',"Revision":' .. round .. '}')
end

function delay()
  return sent >= total and 10 or 0
end

function response(status)
  if status == 200 then
    return
  end
  if status ~= 201 then
    io.stderr:write("a PUT was answered " .. status .. "\n")
  end
  answered = answered + 1
  if answered == total then
    local file = io.open(done, "a")
    file:write(number, "\n")
    file:close()
    local lines = 0
    for _ in io.lines(done) do
      lines = lines + 1
    end
    if lines == threads then
      os.exit(0)
    end
  end
end
