// Package checkmodel holds Savanna's model against measurement: it runs
// the real redis-server and redis-benchmark (Debian's) in two network
// namespaces joined by a veth pair, runs the same shape simulated on the
// `host` machine preset, and prints the figures side by side with the
// error per figure and the band issue 18 sets for it (docs/validation.md).
// The same is done for simrun serve --app kv (Savanna's stack, live) and,
// as the held-out workload, for Debian's nginx serving one static file to
// Debian's wrk against the model's HTTP server and wrk
// (template_http.yaml).
//
// Nothing here feeds back into the prices: calibration measures
// micro-operations only (docs/calibration.md), so these runs are a test
// of the model, never an input to it (docs/cost-model.md, "The rule for
// sources").
package checkmodel
