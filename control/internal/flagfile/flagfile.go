// Package flagfile reads a program's options from a configuration file
// (/etc/e3/...): one "name = value" per line, name being the long flag's
// name without dashes, "#" starting a comment. A flag given on the command
// line wins over the file, so a unit's ExecStart can name the file and an
// operator can still override one option by hand.
package flagfile

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
)

// Flag declares on fs the option naming the file (--conf) that Parse
// reads; example is where a package installs it.
func Flag(fs *flag.FlagSet, example string) *string {
	return fs.String("conf", "", "read options from this file (name = value per line; the command line wins), e.g. "+example)
}

// Load sets every flag of fs that the file names and the command line did
// not. Call it after fs.Parse. An unknown name, a line without "=" or a
// value the flag refuses is an error naming the file and line: a typo in a
// configuration file must stop the program, not be ignored.
func Load(fs *flag.FlagSet, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("configuration file: %w", err)
	}
	defer f.Close()
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("%s:%d: want name = value", path, n)
		}
		name, value = strings.TrimSpace(name), unquote(strings.TrimSpace(value))
		if fs.Lookup(name) == nil {
			return fmt.Errorf("%s:%d: unknown option %q", path, n, name)
		}
		if prev, dup := seen[name]; dup {
			return fmt.Errorf("%s:%d: %s already set on line %d", path, n, name, prev)
		}
		seen[name] = n
		if given[name] {
			continue
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", path, n, name, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// unquote takes off one pair of matching quotes, so a value may keep
// leading or trailing spaces or look like a comment.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// Parse is fs.Parse followed by Load of the file named by the flag conf
// (when set): the one call a command's main makes.
func Parse(fs *flag.FlagSet, args []string, conf *string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *conf == "" {
		return nil
	}
	return Load(fs, *conf)
}
