package easyjob

import (
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// fingerprint names the code that registers a task: the main module of
// the binary and the job function. Replicas of one service agree on it;
// two services that register the same name in one group do not, and
// their nodes report the collision (repository.Collisions).
func fingerprint(fn any) string {
	name := "?"
	if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
		name = f.Name()
	}
	if m := mainModule(); m != "" && !strings.HasPrefix(name, m+"/") && !strings.HasPrefix(name, m+".") {
		return m + ":" + name // main.main.func1 of two services differ by their module
	}
	return name
}

// mainModule is the path of the binary's main module ("" when the binary
// carries no build information).
var mainModule = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Path
	}
	return ""
})
