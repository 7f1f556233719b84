package main

import (
	"fmt"
	"io"

	"github.com/lancens/lancens/internal/buildinfo"
)

// version prints the build of the running binary.
func version(stdout io.Writer) error {
	_, err := fmt.Fprintln(stdout, buildinfo.Read())
	return err
}
