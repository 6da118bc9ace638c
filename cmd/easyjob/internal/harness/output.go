package harness

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

// output is where a command's result goes: --json, --json-file.
type output struct {
	json     bool
	jsonFile string
}

func (o *output) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print JSON instead of a table")
	fs.StringVar(&o.jsonFile, "json-file", "", "also write the JSON result to this file")
}

// write writes v as JSON to --json-file (if set), then to stdout as JSON
// with --json, else as the text print writes.
func (o output) write(v any, text func(io.Writer)) {
	writeJSONFile(o.jsonFile, v)
	if o.json {
		writeJSON(os.Stdout, v)
	} else {
		text(os.Stdout)
	}
}

// writeJSONFile writes v to path (nothing when path is empty).
func writeJSONFile(path string, v any) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob: %v\n", err)
		return
	}
	defer f.Close()
	writeJSON(f, v)
}

// writeJSON writes v to w as indented JSON.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
