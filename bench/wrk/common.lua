-- Shared by the scenario scripts. Each script is run as
--   wrk ... -s bench/wrk/<script>.lua URL -- <api key> <run id> [extra]
-- where <run id> is fresh for every wrk invocation, so that, with wrk's per-thread counter,
-- every generated email address is unique across warm-ups, repeats and threads.
local M = {}

-- Threads are numbered in setup(), which runs in the main state before they start.
local next_thread = 0

function M.setup(thread)
  thread:set("thread_no", next_thread)
  next_thread = next_thread + 1
end

-- Called from each script's init(): the key, a prefix unique to this wrk run and thread,
-- and the optional extra argument.
function M.init(args, content_type)
  local key, run, extra = args[1], args[2], args[3]
  if key ~= nil and key ~= "" and key ~= "-" then
    wrk.headers["Authorization"] = "Bearer " .. key
  end
  if content_type then
    wrk.headers["Content-Type"] = content_type
  end
  return (run or "run") .. "t" .. tostring(thread_no or 0), extra
end

-- One machine-readable line for the driver; wrk's own text report is printed before it.
function M.done(summary, latency, _requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_JSON {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d,"
      .. "\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d,\"max_us\":%d,\"mean_us\":%.1f,"
      .. "\"connect\":%d,\"read\":%d,\"write\":%d,\"status\":%d,\"timeout\":%d}\n",
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end

return M
