package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
)

// Secrets — API keys, object-store credentials — must not have to go on
// the command line, where every user of the machine sees them (ps,
// /proc/PID/cmdline). Each can come from a file instead, or from the
// environment; the files suit container secrets (/run/secrets/…) and
// systemd credentials ($CREDENTIALS_DIRECTORY/…).

// lineFileFlag registers the flag name, which names a file whose lines
// each go to add, and reads first the file the environment variable env
// names, if any. A file's lines are trimmed; blank lines and lines
// starting with # are left out. It returns the error of the file env
// names (which the caller reports with the other environment errors).
func lineFileFlag(fs *flag.FlagSet, name, env, usage string, getenv func(string) string, add func(line string) error) error {
	read := func(path string) error {
		lines, err := readLineFile(path)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if err := add(l.text); err != nil {
				return fmt.Errorf("%s:%d: %w", path, l.number, err)
			}
		}
		return nil
	}
	fs.Func(name, usage+" (env "+env+")", read)
	if path := getenv(env); path != "" {
		if err := read(path); err != nil {
			return fmt.Errorf("bad %s: %w", env, err)
		}
	}
	return nil
}

// fileLine is a line of a file, with its number (from 1) for messages.
type fileLine struct {
	number int
	text   string
}

// readLineFile returns the lines of the file at path that say something:
// trimmed, without blank lines and # comments. It returns an error when
// the file cannot be read or says nothing (an empty secrets file is a
// mistake, not a wish for no keys).
func readLineFile(path string) ([]fileLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []fileLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		if t := strings.TrimSpace(sc.Text()); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, fileLine{number: n, text: t})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s holds no entries (blank lines and # comments only)", path)
	}
	return lines, nil
}
