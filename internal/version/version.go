// Package version holds Savanna's version, written into every report so
// that a report names the code that made it.
package version

// Version is Savanna's release. Reports made by the same version from the
// same scenario and seed are byte-identical.
const Version = "0.1.0-dev"
