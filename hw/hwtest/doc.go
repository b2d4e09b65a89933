// Package hwtest is one conformance suite for every backend of Savanna's
// hardware contracts: functions that declare Ginkgo specs against a
// backend factory, called from the test files of the simulated devices
// (sim/nic, sim/qat), the real-time ring ports (hw/ringdev) and the DPDK
// backend (hw/dpdk, -tags dpdk). The same spec text runs on the model and
// on the real driver, so a difference between them is a failing spec
// (issue 10: "one suite, two backends").
//
// Where a model and a driver genuinely differ, the factory says so in a
// capability (EthCaps, CompressQuirks, or hw.CompressCapabilities) and the
// spec checks the behaviour that capability promises; nothing is skipped
// without a reason the report shows.
//
// The specs are backend-neutral about time: the factory's Advance lets
// time pass (a simulation runs its engine; a real device yields), and the
// specs poll with it a bounded number of times instead of sleeping or
// asserting on wall-clock time.
package hwtest
