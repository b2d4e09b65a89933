-- simrun check-model's wrk script (internal/checkmodel/wrkout.go reads
-- what it prints). wrk's own summary rounds latencies to two decimals of
-- a unit it chooses; done() (wrk's SCRIPTING: summary, latency,
-- requests) gives the exact mean in microseconds, the percentiles in
-- whole microseconds, and the counts, one key=value line each.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("savanna-wrk requests=%d duration_us=%d bytes=%d connect_errors=%d read_errors=%d write_errors=%d status_errors=%d timeouts=%d\n",
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
  io.write(string.format("savanna-wrk-latency mean_us=%.3f stdev_us=%.3f min_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    latency.mean, latency.stdev, latency.min, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
