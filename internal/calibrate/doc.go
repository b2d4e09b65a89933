// Package calibrate measures this machine's micro-operations (a null
// system call, epoll_wait, futex, context switches and wake-ups, memcpy,
// loopback TCP, deflate, inflate, CRC-32 and Savanna's own stack per
// packet) in real time and writes a cost-model file in the format of
// sim/cost's default model, every price with the benchmark, its median
// and spread over repeated runs, and the machine it was measured on.
//
// It is what `simrun calibrate` runs; docs/calibration.md says what each
// benchmark measures, how its figure maps onto the cost operations, and
// how a machine too busy for stable figures is detected. Calibration
// measures micro-operations only: no price is fitted to a whole
// workload, so that a scenario's figures remain a test of the model
// (docs/cost-model.md, "The rule for sources").
package calibrate
