//go:build !linux

package cli

import (
	"errors"
	"os"
)

// readHidden has no way to turn echo off on this system; a password is
// then piped in with --password-stdin.
func readHidden(f *os.File) (string, error) {
	return "", errors.New("cannot hide typing on this system: pipe the password in with --password-stdin")
}

// isTTY is false here: without a way to hide typing, a password is never
// read from the terminal.
func isTTY(f *os.File) bool { return false }
