package qat

import (
	"fmt"
	"sort"
	"time"
)

// Generation is the QAT hardware generation of a device model. It decides
// which compression levels the hardware has.
type Generation int

// Generations.
const (
	// Gen1 is QAT 1.6 (dh895xcc, Coleto Creek).
	Gen1 Generation = 1
	// Gen2 is QAT 1.7 (c62x, Lewisburg PCH).
	Gen2 Generation = 2
	// Gen4 is QAT 2.0 (4xxx, on 4th Gen Xeon).
	Gen4 Generation = 4
)

// Figure is one number of a preset with where it comes from, so that
// docs/qat.md and the statistics can show the source of every figure.
type Figure struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
}

// DeviceModel is the published shape and the service-time defaults of one
// QAT device model.
type DeviceModel struct {
	// Name is the model's key in scenario files ("dh895xcc").
	Name string `json:"name"`
	// DriverName is the kernel driver / DPDK PMD name of its PF.
	DriverName string     `json:"driver_name"`
	Generation Generation `json:"generation"`
	// PFs is the number of physical functions of one device, MaxVFsPerPF
	// how many SR-IOV virtual functions each can expose.
	PFs         Figure `json:"pfs"`
	MaxVFsPerPF Figure `json:"max_vfs_per_pf"`
	// Engines is the number of compression engines (slices) of the
	// device, all PFs together.
	Engines Figure `json:"engines"`
	// CompressGbps and DecompressGbps are the device's throughput, all
	// engines together, in Gbit/s of uncompressed data.
	CompressGbps   Figure `json:"compress_gbps"`
	DecompressGbps Figure `json:"decompress_gbps"`
	// LatencyNanos is the fixed part of one request's service time: ring
	// fetch, descriptor parse, DMA setup and response write.
	LatencyNanos Figure `json:"latency_nanos"`
}

// Latency returns the fixed per-request latency.
func (m DeviceModel) Latency() time.Duration { return time.Duration(m.LatencyNanos.Value) }

// MaxVFs is the number of VFs the whole device can expose.
func (m DeviceModel) MaxVFs() int { return int(m.PFs.Value) * int(m.MaxVFsPerPF.Value) }

// Models returns the device presets, sorted by name. It is a function,
// not a table variable, so the package holds no mutable state.
func Models() []DeviceModel {
	ms := []DeviceModel{
		{
			Name: "dh895xcc", DriverName: "qat_dh895xcc", Generation: Gen1,
			PFs:          Figure{1, "one PF per DH895xCC device (Linux drivers/crypto/intel/qat/qat_dh895xcc)"},
			MaxVFsPerPF:  Figure{32, "the seed: 'a DH895XCC device can be shared by up to 32 virtual machines' (SR-IOV, 32 VFs on its one PF)"},
			Engines:      Figure{6, "ADF_DH895XCC_MAX_ACCELERATORS = 6 (Linux adf_dh895xcc_hw_data.h)"},
			CompressGbps: Figure{24, "Intel QuickAssist Adapter 8950 product brief: up to 24 Gb/s compression"},
			DecompressGbps: Figure{24,
				"assumption: same as compression (the product brief gives one figure)"},
			LatencyNanos: Figure{5000, "assumption: a few microseconds per request (QAT performance guides report single-request latencies of ~5-20 us for small buffers)"},
		},
		{
			Name: "c62x", DriverName: "qat_c62x", Generation: Gen2,
			PFs:          Figure{3, "three QAT PFs per C62x PCH (Linux qat_c62x; lspci shows 3 x 37c8)"},
			MaxVFsPerPF:  Figure{16, "16 VFs per PF (Intel QAT SR-IOV guide for C62x; the issue's device shape)"},
			Engines:      Figure{15, "ADF_C62X_MAX_ACCELERATORS = 5 per PF (Linux adf_c62x_hw_data.h) x 3 PFs"},
			CompressGbps: Figure{40, "assumption: Intel C627/C628 chipset QAT rated 'up to 40 Gb/s compression' in the C620 series briefs; the top C62x SKUs state higher figures"},
			DecompressGbps: Figure{40,
				"assumption: same as compression"},
			LatencyNanos: Figure{4000, "assumption: a few microseconds per request (QAT performance guides)"},
		},
		{
			Name: "4xxx", DriverName: "qat_4xxx", Generation: Gen4,
			PFs:          Figure{1, "one PF per 4xxx device (Linux qat_4xxx; one device per accelerator on 4th Gen Xeon)"},
			MaxVFsPerPF:  Figure{16, "16 VFs per PF (Linux qat_4xxx driver, QAT 2.0 SR-IOV guide)"},
			Engines:      Figure{8, "assumption: 8 compression-capable accelerator engines (ADF_4XXX_MAX_ACCELENGINES = 9 with one admin AE)"},
			CompressGbps: Figure{160, "assumption: Intel 4th Gen Xeon QAT marketing: up to 160 Gb/s compression per device"},
			DecompressGbps: Figure{160,
				"assumption: same as compression"},
			LatencyNanos: Figure{3000, "assumption: a few microseconds per request (QAT performance guides)"},
		},
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	return ms
}

// ModelByName finds a preset.
func ModelByName(name string) (DeviceModel, error) {
	for _, m := range Models() {
		if m.Name == name {
			return m, nil
		}
	}
	names := make([]string, 0, 3)
	for _, m := range Models() {
		names = append(names, m.Name)
	}
	return DeviceModel{}, fmt.Errorf("unknown QAT model %q (known: %v)", name, names)
}

// HardwareLevel maps a zlib level (1..9) to the level the hardware runs.
//
// Gen1/Gen2 (QAT 1.x) have four search depths: the driver's
// dcCompHwBlockPopulate maps CPA_DC_L1..L4 to depth 1, 4, 8 and 16 and
// every level above 4 to the highest depth, so levels 5..9 run as level 4
// (SalCtrl_Init_Compression_Levels_gen2 marks only L1..L4 unique; QATzip
// documents the same). Gen4 (QAT 2.0) has three: L1..L5 run at search
// depth 1, L6..L8 at depth 6 and L9 at depth 9 (dc_session.c,
// ICP_QAT_HW_COMP_20_SEARCH_DEPTH_LEVEL_*). The model reproduces the bytes
// with klauspost/compress at the level returned here.
func HardwareLevel(gen Generation, level int) int {
	level = max(1, min(9, level))
	switch gen {
	case Gen4:
		switch {
		case level <= 5:
			return 1
		case level <= 8:
			return 6
		}
		return 9
	default:
		return min(level, 4)
	}
}
