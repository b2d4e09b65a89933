//go:build !linux

package livetest

import "errors"

// InNetns needs Linux's network namespaces.
func InNetns(ns string, fn func() error) error {
	return errors.New("network namespaces need Linux")
}
