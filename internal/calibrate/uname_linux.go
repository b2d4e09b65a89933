package calibrate

import "golang.org/x/sys/unix"

// kernelRelease is uname -r and -m.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
}
