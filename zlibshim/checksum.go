package zlibshim

import "hash/crc32"

// crc32Update continues the gzip CRC-32 (IEEE) over p.
func crc32Update(crc uint32, p []byte) uint32 { return crc32.Update(crc, crc32.IEEETable, p) }
