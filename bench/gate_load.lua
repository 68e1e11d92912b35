-- wrk script for bench/gate_load.py: every request is a NEW gate decision.
--
-- Environment (set by gate_load.py):
--   GATE_LOAD_RUNS      file of "run_id session_token" lines; requests rotate over them
--   GATE_LOAD_SCENARIO  always | never | shell20 | ceiling
--   GATE_LOAD_NONCE     prefix of every tool_call_id, unique per phase (never a replay)
--   GATE_LOAD_THINK_MS  closed loop: mean think time per connection before each request
--   GATE_LOAD_RATE      open loop: requests per second this wrk thread sends
--                       (neither: flat out)

local scenario = os.getenv("GATE_LOAD_SCENARIO")
local nonce = os.getenv("GATE_LOAD_NONCE")
local think = tonumber(os.getenv("GATE_LOAD_THINK_MS") or "0")
local rate = tonumber(os.getenv("GATE_LOAD_RATE") or "0")

local next_thread = 1
local runs = {}
local counter = 0

-- Twenty simple commands, every one allowed by its own rule, so the whole line is parsed,
-- normalised and matched segment by segment.
local SEGMENTS = {
  "git status", "ls -la /workspace/src", "grep -n TODO /workspace/src/app.py", "wc -l",
  "cat /workspace/README.md", "head -n 5", "echo step-%d", "git log --oneline -n 3",
  "ls /workspace/tests", "grep -c def", "cat /workspace/setup.cfg", "wc -c",
  "echo checked-%d", "git diff --stat", "head -n 20 /workspace/CHANGES.md", "grep -v '^#'",
  "ls -1 /workspace/docs", "wc -w", "echo done-%d", "git status --short",
}
local SEPARATORS = { " && ", " | ", "; ", " | " }

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  for line in io.lines(os.getenv("GATE_LOAD_RUNS")) do
    local id, token = line:match("^(%S+) (%S+)$")
    runs[#runs + 1] = { path = "/v1/runs/" .. id .. "/permission", auth = "Bearer " .. token }
  end
  math.randomseed(thread_id * 7919 + os.time())
end

local function shell_line(n)
  local parts = {}
  for index, segment in ipairs(SEGMENTS) do
    parts[#parts + 1] = segment:gsub("%%d", tostring(n))
    if index < #SEGMENTS then
      parts[#parts + 1] = SEPARATORS[(index - 1) % #SEPARATORS + 1]
    end
  end
  return table.concat(parts)
end

local function json_string(text)
  return '"' .. text:gsub('\\', '\\\\'):gsub('"', '\\"') .. '"'
end

local function gate_body(n)
  local tool, arguments
  if scenario == "always" then
    tool, arguments = "read_file", '{"path":"/workspace/src/module_' .. n .. '.py"}'
  elseif scenario == "never" then
    tool, arguments = "run_command", '{"command":"rm -rf /workspace/build-' .. n .. '"}'
  elseif scenario == "shell20" then
    tool, arguments = "run_command", '{"command":' .. json_string(shell_line(n)) .. '}'
  else
    error("unknown GATE_LOAD_SCENARIO " .. tostring(scenario))
  end
  return '{"session_id":"load","tool_call_id":"' .. nonce .. '-' .. thread_id .. '-' .. n
    .. '","tool":"' .. tool .. '","arguments":' .. arguments .. '}'
end

function request()
  counter = counter + 1
  local slot = (counter + thread_id * 31) % #runs + 1
  if scenario == "ceiling" then
    local body = '{"counter":' .. slot .. ',"payload":{"tool":"read_file","path":'
      .. '"/workspace/src/module_' .. counter .. '.py","id":"' .. nonce .. '-' .. counter .. '"}}'
    return wrk.format("POST", "/bench/ceiling", { ["Content-Type"] = "application/json" }, body)
  end
  local run = runs[slot]
  local headers = { ["Content-Type"] = "application/json", ["Authorization"] = run.auth }
  return wrk.format("POST", run.path, headers, gate_body(counter))
end

if think > 0 then
  -- Closed loop: exponential think time, so arrivals spread out instead of marching in
  -- lockstep. The rate then depends on the latency: when the server slows, so does the load.
  function delay()
    return -math.log(1 - math.random()) * think
  end
elseif rate > 0 then
  -- Open loop: requests arrive as a Poisson process at `rate`, whatever the latency. A
  -- connection that comes free before the next arrival waits for it; one that comes free
  -- after it sends at once, so a stall is followed by the backlog it built up.
  local ffi = require("ffi")
  ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } gate_load_timespec;
    int clock_gettime(int clock_id, gate_load_timespec *tp);
  ]]
  local CLOCK_MONOTONIC = 1
  local clock = ffi.new("gate_load_timespec")
  local function now_ms()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, clock)
    return tonumber(clock.tv_sec) * 1000 + tonumber(clock.tv_nsec) / 1e6
  end
  local due = nil
  function delay()
    local now = now_ms()
    due = (due or now) - math.log(1 - math.random()) * 1000 / rate
    return math.max(0, due - now)
  end
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'GATE_LOAD_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,'
      .. '"p99_us":%d,"max_us":%d,"non2xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout
  ))
end
