package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lancens/lancens/internal/closest"
	"github.com/lancens/lancens/objstore"
)

// A configuration file (--config FILE) holds settings of `lancens serve`
// as YAML whose keys are the flag names:
//
//	addr: 127.0.0.1:2333
//	api-key-file: /etc/lancens/api-keys
//	cors-origin: [https://app.example.com]
//	storage-option: {aws_region: eu-west-1, aws_endpoint: https://s3.example.com}
//
// It works over the flag set alone, so every flag, whoever adds it, can be
// set there without edits here. A value is handed to the flag as if it had
// been given on the command line: a list once per item (for repeatable
// flags), a mapping as KEY=VALUE per entry. Precedence, highest first:
// the command line, the environment, the file, the defaults. A flag given
// on the command line or whose environment variable is set ignores the
// file's value whole; repeatable flags do not add the file's items to
// theirs.
//
// Two conventions of the flags' usage texts carry meaning here, as they do
// for people reading -h: "(env NAME" names the flag's environment variable,
// and "repeatable" marks a flag that may be given more than once.

// configFlags are --config and --print-config, and what parse learns for
// --print-config.
type configFlags struct {
	fs     *flag.FlagSet
	getenv func(string) string
	// path is --config; print is --print-config.
	path  string
	print bool
	// cmdline and file are the values each flag got on the command line
	// and from the file.
	cmdline, file map[string][]string
}

// Flags that are about the configuration, not part of it.
const (
	configFlag      = "config"
	printConfigFlag = "print-config"
)

// addConfigFlags registers --config and --print-config on fs.
func addConfigFlags(fs *flag.FlagSet, getenv func(string) string) *configFlags {
	c := &configFlags{fs: fs, getenv: getenv, cmdline: map[string][]string{}, file: map[string][]string{}}
	fs.StringVar(&c.path, configFlag, getenv("LANCENS_CONFIG"),
		"a YAML `FILE` of settings whose keys are the flag names; the command line and the environment override it (env LANCENS_CONFIG)")
	fs.BoolVar(&c.print, printConfigFlag, false,
		"print the effective configuration (command line, environment, --config file, defaults) as YAML, secrets redacted, and exit")
	return c
}

// parse parses args, then applies the configuration file. It returns
// errUsage for a bad command line (the flag package has printed why), or
// an error naming the file, the line and the problem: YAML that is not a
// mapping of flag names to values, an unknown key (with the closest flag
// name), a key given twice, a list for a flag that takes one value, or a
// value the flag refuses.
func (c *configFlags) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		return errUsage
	}
	c.recordCommandLine(args)
	if c.path == "" {
		return nil
	}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("--config %s: %w", c.path, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file, or comments alone
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("--config %s:%d: want a mapping of flag names to values, such as addr: 127.0.0.1:2333", c.path, root.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		where := fmt.Sprintf("--config %s:%d", c.path, k.Line)
		name := k.Value
		f := c.fs.Lookup(name)
		switch {
		case name == configFlag || name == printConfigFlag:
			return fmt.Errorf("%s: %s is a command-line flag only", where, name)
		case f == nil:
			return fmt.Errorf("%s: unknown key %q%s; the keys are the flags of lancens serve -h, without the dashes",
				where, name, closest.Hint(name, c.settingNames()))
		case seen[name]:
			return fmt.Errorf("%s: %s is given twice", where, name)
		}
		seen[name] = true
		values, err := nodeValues(v)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", where, name, err)
		}
		if len(values) > 1 && !repeatable(f) {
			return fmt.Errorf("%s: %s takes one value, not a list", where, name)
		}
		if c.cmdline[name] != nil || c.envValue(f) != "" {
			continue // the command line and the environment win
		}
		for _, val := range values {
			if err := c.fs.Set(name, val); err != nil {
				return fmt.Errorf("%s: %s: %w", where, name, err)
			}
		}
		c.file[name] = values
	}
	return nil
}

// nodeValues returns the values a YAML value gives its flag: a scalar's
// text, each item of a list of scalars, KEY=VALUE for each entry of a
// mapping. It returns an error for a null, nested structures or aliases.
func nodeValues(v *yaml.Node) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil, errors.New("no value (write \"\" for an empty one)")
		}
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		values := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: a list item must be a plain value", item.Line)
			}
			values = append(values, item.Value)
		}
		return values, nil
	case yaml.MappingNode:
		var values []string
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping entry must be KEY: VALUE", k.Line)
			}
			values = append(values, k.Value+"="+val.Value)
		}
		return values, nil
	}
	return nil, errors.New("want a value, a list or a mapping")
}

// recordCommandLine notes the values each flag got in args, which fs has
// parsed without error: the flag package keeps only the last (and none
// for flags that act as they are set).
func (c *configFlags) recordCommandLine(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := c.fs.Lookup(name)
		if f == nil {
			return // -h, -help
		}
		if !hasVal {
			if isBoolFlag(f) {
				val = "true"
			} else if i+1 < len(args) {
				i++
				val = args[i]
			}
		}
		c.cmdline[name] = append(c.cmdline[name], val)
	}
}

// envPattern finds the environment variable a flag's usage names.
var envPattern = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*)`)

// envName returns the environment variable of flag f, or "" if its usage
// names none.
func envName(f *flag.Flag) string {
	if m := envPattern.FindStringSubmatch(f.Usage); m != nil {
		return m[1]
	}
	return ""
}

// envValue returns the value of f's environment variable ("" when unset).
func (c *configFlags) envValue(f *flag.Flag) string {
	if name := envName(f); name != "" {
		return c.getenv(name)
	}
	return ""
}

// repeatable reports whether f may be given more than once, each value
// adding to the others.
func repeatable(f *flag.Flag) bool { return strings.Contains(f.Usage, "repeatable") }

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// settingNames returns the names of the flags a configuration file may set.
func (c *configFlags) settingNames() []string {
	var names []string
	c.fs.VisitAll(func(f *flag.Flag) {
		if f.Name != configFlag && f.Name != printConfigFlag {
			names = append(names, f.Name)
		}
	})
	return names
}

// redacted stands in for a secret in --print-config.
const redacted = "<redacted>"

// secretWords, as words of a flag's name, mark its values as secrets,
// unless the flag names a file: its name ends in -file (--api-key-file),
// or it is one of pathFlags. A flag wrongly taken for a secret is only
// hidden; the other mistake would print a secret.
var secretWords = []string{"secret", "secrets", "token", "tokens", "password", "passwd", "key", "keys", "headers"}

// pathFlags name files although their names hold a secret word.
var pathFlags = []string{"tls-key"}

// redact returns value of flag f as --print-config shows it: a storage
// option's credential, the password of a database URL and the value of a
// flag whose name says it is a secret replaced by <redacted>.
func redact(f *flag.Flag, value string) string {
	switch f.Name {
	case "db":
		return displayDB(value)
	case "storage-option":
		k, v, _ := strings.Cut(value, "=")
		if len(objstore.Options{k: v}.Public()) == 0 {
			return k + "=" + redacted
		}
		return value
	}
	if value == "" || strings.HasSuffix(f.Name, "-file") || slices.Contains(pathFlags, f.Name) {
		return value
	}
	for _, w := range strings.Split(f.Name, "-") {
		if slices.Contains(secretWords, w) {
			return redacted
		}
	}
	return value
}

// printConfig writes the effective configuration as a YAML configuration
// file: every flag with a value, with where the value came from, secrets
// redacted; the flags without one are listed in a closing comment.
func (c *configFlags) printConfig(w io.Writer) error {
	root := &yaml.Node{Kind: yaml.MappingNode}
	var unset []string
	c.fs.VisitAll(func(f *flag.Flag) {
		if f.Name == configFlag || f.Name == printConfigFlag {
			return
		}
		values, source := c.effective(f)
		if len(values) == 0 || (len(values) == 1 && values[0] == "" && source == "default") {
			unset = append(unset, f.Name)
			return
		}
		var v *yaml.Node
		if repeatable(f) {
			v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, val := range values {
				v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: redact(f, val)})
			}
		} else {
			v = &yaml.Node{Kind: yaml.ScalarNode, Value: redact(f, values[len(values)-1])}
		}
		v.LineComment = source
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.Name}, v)
	})
	root.HeadComment = "lancens serve: the effective configuration, secrets redacted"
	if c.path != "" {
		root.HeadComment += "\n--config " + c.path
	}
	if len(unset) > 0 {
		root.FootComment = "not set (their built-in behaviour applies): " + strings.Join(unset, ", ")
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return err
	}
	return enc.Close()
}

// effective returns the values of flag f in effect and where they came
// from: the command line, the configuration file, the environment or the
// default. A flag that shows its value (String) is read from it; a flag
// that acts as it is set (flag.Func) is told from the values it was given.
// A repeatable flag holds its environment variable's items (split at
// commas where its usage says "comma-separated") and the command line's.
func (c *configFlags) effective(f *flag.Flag) (values []string, source string) {
	env := c.envValue(f)
	given, source := c.cmdline[f.Name], "command line"
	if given == nil {
		given, source = c.file[f.Name], "--config"
	}
	if given == nil {
		source = "default"
		if env != "" {
			source = "env " + envName(f)
		}
	} else if env != "" && repeatable(f) {
		source = "env " + envName(f) + " and " + source
	}
	if s := f.Value.String(); s != "" {
		return []string{s}, source
	}
	if repeatable(f) {
		items := []string{env}
		if strings.Contains(f.Usage, "comma-separated") {
			items = strings.Split(env, ",")
		}
		for _, item := range items {
			if item = strings.TrimSpace(item); item != "" {
				values = append(values, item)
			}
		}
		return append(values, given...), source
	}
	switch {
	case given != nil:
		return given[len(given)-1:], source
	case env != "":
		return []string{env}, source
	}
	return []string{f.DefValue}, source
}
