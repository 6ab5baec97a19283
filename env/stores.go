package env

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/fencebench/fencebench/outcome"
)

// StoreSpec is one store of a stores file: its name and the options that open it as an
// external stack. The credentials in Options come from the environment variables the file
// names; the file itself holds no credential.
type StoreSpec struct {
	// Name names the store in the comparison and is its results subfolder and key prefix
	// component: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with a dot.
	Name string
	// Options open the store: Stack "external", Prefix "" (the caller chooses one).
	Options Options
	// Line is where the store's entry starts in the file.
	Line int
}

// storeFields are the fields of a store entry, in the order the errors list them.
var storeFields = []string{"name", "server", "endpoint", "bucket", "region", "addressing", "ca_file",
	"access_key_env", "secret_key_env", "create_bucket"}

// maxServer bounds the length of a store's server description.
const maxServer = 120

var (
	storeName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`)
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// storesParser collects every problem of a stores file, each located as file:line.
type storesParser struct {
	file   string
	getenv func(string) string
	errs   []string
}

func (p *storesParser) errf(n *yaml.Node, format string, a ...any) {
	p.errs = append(p.errs, fmt.Sprintf("%s:%d: ", p.file, n.Line)+fmt.Sprintf(format, a...))
}

// LoadStores reads a stores file: a YAML list of stores, each a mapping of name, endpoint,
// bucket, and optionally server (what the store runs, as the reports name it: one line of at
// most 120 characters), region, addressing (path, virtual or auto), ca_file (relative to the
// file), create_bucket, and access_key_env and secret_key_env, the names of the environment
// variables (looked up with getenv) that hold the credentials. Decoding is strict: an unknown
// or repeated field, a missing one, a repeated name, a literal credential or an unset variable
// is an error naming file:line; every problem is reported at once, wrapped in
// outcome.ErrBadInput. No error message repeats a value that could be a credential.
func LoadStores(path string, getenv func(string) string) ([]StoreSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, outcome.BadInput(fmt.Errorf("stores file: %w", err))
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		return nil, outcome.BadInput(fmt.Errorf("%s: %v", path, err))
	}
	p := &storesParser{file: path, getenv: getenv}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.SequenceNode || len(root.Content) == 0 {
		p.errf(root, "want a list of stores, each a mapping with %s", strings.Join(storeFields, ", "))
		return nil, p.err()
	}
	var out []StoreSpec
	seen := map[string]int{}
	for _, n := range root.Content {
		s, ok := p.store(n, filepath.Dir(path))
		if !ok {
			continue
		}
		if first, dup := seen[strings.ToLower(s.Name)]; dup {
			p.errf(n, "name %q is given twice (first at line %d)", s.Name, first)
			continue
		}
		seen[strings.ToLower(s.Name)] = s.Line
		out = append(out, s)
	}
	if len(p.errs) > 0 {
		return nil, p.err()
	}
	return out, nil
}

func (p *storesParser) err() error {
	return outcome.BadInput(fmt.Errorf("%s", strings.Join(p.errs, "\n")))
}

// store decodes one entry; ok is false when it has a problem (already recorded).
func (p *storesParser) store(n *yaml.Node, dir string) (StoreSpec, bool) {
	before := len(p.errs)
	f := p.fields(n)
	s := StoreSpec{Line: n.Line, Options: Options{Stack: "external"}}
	s.Name = p.required(n, f, "name")
	if s.Name != "" && !storeName.MatchString(s.Name) {
		p.errf(f["name"], "name %q: want 1 to 64 of A-Z a-z 0-9 . _ -, not starting with a dot", s.Name)
	}
	o := &s.Options
	o.Server = p.scalar(f, "server")
	if len(o.Server) > maxServer || strings.ContainsFunc(o.Server, unicode.IsControl) {
		p.errf(f["server"], "server: want one line of at most %d characters", maxServer)
	}
	o.Endpoint, o.Bucket = p.required(n, f, "endpoint"), p.required(n, f, "bucket")
	o.Region, o.Addressing = p.scalar(f, "region"), p.scalar(f, "addressing")
	if a := o.Addressing; a != "" && a != "path" && a != "virtual" && a != "auto" {
		p.errf(f["addressing"], "addressing %q: want path, virtual or auto", a)
	}
	if ca := p.scalar(f, "ca_file"); ca != "" {
		if !filepath.IsAbs(ca) {
			ca = filepath.Join(dir, ca)
		}
		o.CAFile = ca
	}
	if v, ok := f["create_bucket"]; ok {
		if err := v.Decode(&o.CreateBucket); err != nil {
			p.errf(v, "create_bucket: want true or false")
		}
	}
	o.AccessKey = p.credential(n, f, "access_key_env")
	o.SecretKey = p.credential(n, f, "secret_key_env")
	return s, len(p.errs) == before
}

// fields returns the entry's fields by name, recording unknown and repeated ones. An unknown
// field is named, its value never repeated.
func (p *storesParser) fields(n *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, "want a mapping with fields %s", strings.Join(storeFields, ", "))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Value == "access_key" || k.Value == "secret_key" || k.Value == "session_token":
			p.errf(k, "%s: literal credentials are refused; name the environment variable that holds it in %s_env", k.Value, k.Value)
		case !slices.Contains(storeFields, k.Value):
			p.errf(k, "unknown field %q; want one of %s", k.Value, strings.Join(storeFields, ", "))
		case out[k.Value] != nil:
			p.errf(k, "%s: given twice", k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out
}

func (p *storesParser) scalar(f map[string]*yaml.Node, field string) string {
	v, ok := f[field]
	if !ok {
		return ""
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		p.errf(v, "%s: want a string", field)
		return ""
	}
	return v.Value
}

func (p *storesParser) required(n *yaml.Node, f map[string]*yaml.Node, field string) string {
	if _, ok := f[field]; !ok && n.Kind == yaml.MappingNode {
		p.errf(n, "%s: missing", field)
		return ""
	}
	s := p.scalar(f, field)
	if s == "" && f[field] != nil && f[field].Kind == yaml.ScalarNode && f[field].Tag != "!!null" {
		p.errf(f[field], "%s: empty", field)
	}
	return s
}

// credential reads the environment variable that field names. Neither the name nor the value
// is repeated in an error: a credential pasted where its variable's name belongs must not
// reach a terminal or a log.
func (p *storesParser) credential(n *yaml.Node, f map[string]*yaml.Node, field string) string {
	name := p.required(n, f, field)
	switch {
	case name == "":
		return ""
	case !envName.MatchString(name):
		p.errf(f[field], "%s: want the name of an environment variable (letters, digits and _)", field)
		return ""
	}
	v := p.getenv(name)
	if v == "" {
		p.errf(f[field], "%s: the environment variable it names is not set or empty", field)
	}
	return v
}
