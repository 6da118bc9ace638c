package dashboard

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/alert"
)

// openAPIPath is the API's description, from this package's directory.
var openAPIPath = filepath.Join("..", "..", "docs", "openapi.yaml")

// readOpenAPI returns the lines of docs/openapi.yaml.
func readOpenAPI(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// yamlKeys returns the keys at indent (spaces) of the block of the line
// start: the lines after it up to the next one indented no more than it.
// The file is ours: keys are plain words, blocks are indented by spaces.
func yamlKeys(t *testing.T, lines []string, start string, indent int) []string {
	t.Helper()
	i := slices.Index(lines, start)
	if i < 0 {
		t.Fatalf("%s: no line %q", openAPIPath, start)
	}
	own := len(start) - len(strings.TrimLeft(start, " "))
	key := regexp.MustCompile(`^` + strings.Repeat(" ", indent) + `("?[^\s:"]+"?):`)
	var keys []string
	for _, l := range lines[i+1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l)-len(strings.TrimLeft(l, " ")) <= own {
			break
		}
		if m := key.FindStringSubmatch(l); m != nil {
			keys = append(keys, strings.Trim(m[1], `"`))
		}
	}
	return keys
}

// TestOpenAPIRoutes: docs/openapi.yaml describes every route the API
// serves, and none other.
func TestOpenAPIRoutes(t *testing.T) {
	lines := readOpenAPI(t)
	var inFile []string
	i := slices.Index(lines, "paths:")
	for _, path := range yamlKeys(t, lines, "paths:", 2) {
		for _, m := range yamlKeys(t, lines[i:], "  "+path+":", 4) {
			if m != "parameters" {
				inFile = append(inFile, strings.ToUpper(m)+" "+path)
			}
		}
	}
	served := []string{"GET " + apiPrefix + "/groups"} // the Handler's, not the API's
	for _, rt := range apiRoutes {
		served = append(served, rt.Method+" "+apiPrefix+rt.Path)
	}
	slices.Sort(inFile)
	slices.Sort(served)
	if !slices.Equal(inFile, served) {
		t.Errorf("the OpenAPI file's operations differ from the routes served:\nfile:   %q\nserved: %q", inFile, served)
	}
}

// TestOpenAPISchemas: the error codes, the request bodies and the task's
// JSON are those of the code.
func TestOpenAPISchemas(t *testing.T) {
	lines := readOpenAPI(t)
	var codes []string
	i := slices.Index(lines, "    Error:")
	for _, l := range lines[i:] {
		if strings.HasPrefix(l, "            - ") {
			codes = append(codes, strings.TrimPrefix(l, "            - "))
		}
		if l == "    Duration:" {
			break
		}
	}
	same(t, "error codes", codes, errorCodes())
	same(t, "Schedule properties", yamlKeys(t, lines, "    Schedule:", 8), jsonNames(reflect.TypeFor[scheduleJSON]()))
	same(t, "Misfire properties", yamlKeys(t, lines, "    Misfire:", 8), jsonNames(reflect.TypeFor[misfireJSON]()))
	same(t, "Trigger properties", yamlKeys(t, lines, "    Trigger:", 8), jsonNames(reflect.TypeFor[triggerJSON]()))
	same(t, "Task properties", yamlKeys(t, lines, "    Task:", 8), jsonNames(reflect.TypeFor[apiTask]()))
	same(t, "Run properties", yamlKeys(t, lines, "    Run:", 8), jsonNames(reflect.TypeFor[easyjob.ExecutionInfo]()))
	same(t, "Handler properties", yamlKeys(t, lines, "    Handler:", 8), jsonNames(reflect.TypeFor[easyjob.HandlerInfo]()))
	same(t, "AuditEntry properties", yamlKeys(t, lines, "    AuditEntry:", 8), jsonNames(reflect.TypeFor[easyjob.AuditEntry]()))
	same(t, "FireGraph properties", yamlKeys(t, lines, "    FireGraph:", 8), jsonNames(reflect.TypeFor[easyjob.FireGraph]()))
	same(t, "FireStep properties", yamlKeys(t, lines, "    FireStep:", 8), jsonNames(reflect.TypeFor[easyjob.FireStep]()))
	same(t, "Version properties", yamlKeys(t, lines, "    Version:", 8), jsonNames(reflect.TypeFor[easyjob.Version]()))
	same(t, "GroupSummary properties", yamlKeys(t, lines, "    GroupSummary:", 8), jsonNames(reflect.TypeFor[GroupSummary]()))
	same(t, "GroupList properties", yamlKeys(t, lines, "    GroupList:", 8), jsonNames(reflect.TypeFor[GroupList]()))
	same(t, "Alert properties", yamlKeys(t, lines, "    Alert:", 8), jsonNames(reflect.TypeFor[alert.Record]()))
	same(t, "AlertRule properties", yamlKeys(t, lines, "    AlertRule:", 8), jsonNames(reflect.TypeFor[alert.StoredRule]()))
	same(t, "AlertRuleInput properties", yamlKeys(t, lines, "    AlertRuleInput:", 8), jsonNames(reflect.TypeFor[alertRuleJSON]()))
	node := append(jsonNames(reflect.TypeFor[easyjob.NodeInfo]()), "heartbeat_age_seconds") // MarshalJSON adds it
	same(t, "Node properties", yamlKeys(t, lines, "    Node:", 8), node)
}

// same reports a difference between two sets of names.
func same(t *testing.T, what string, inFile, inCode []string) {
	t.Helper()
	a, b := slices.Sorted(slices.Values(inFile)), slices.Sorted(slices.Values(inCode))
	if !slices.Equal(a, b) {
		t.Errorf("%s: the OpenAPI file has %q, the code %q", what, a, b)
	}
}

// jsonNames lists the JSON names of the fields of struct type typ,
// embedded structs' included.
func jsonNames(typ reflect.Type) []string {
	var own, deeper []string
	hidden := map[string]bool{}
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			deeper = append(deeper, jsonNames(f.Type)...)
		case f.Type == reflect.TypeFor[*struct{}]():
			hidden[name] = true // a field that hides an embedded one's, never written
		case name != "":
			own = append(own, name)
		case f.IsExported():
			own = append(own, f.Name)
		}
	}
	// A name of this level hides the same name embedded deeper, as
	// encoding/json does.
	for _, n := range own {
		hidden[n] = true
	}
	return append(own, slices.DeleteFunc(deeper, func(n string) bool { return hidden[n] })...)
}
