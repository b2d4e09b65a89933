// Package sim is Savanna's virtual-time engine: a clock in nanoseconds, an
// event queue with a total, deterministic order, simulated cores (lcores)
// that are busy for the cost of the work they run, timers, and seeded
// random streams, one per model.
//
// The engine is single-threaded. It starts no goroutines and reads no wall
// clock, so the same scenario and seed always produce the same sequence of
// events (architecture invariants 2 and 3).
package sim
