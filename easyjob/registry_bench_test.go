package easyjob

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkValidateForest checks a registration of 20 000 tasks (chains
// of 4 and a DAG step after every tenth chain): its cost must grow with
// the tasks, not their square (a quadratic cycle check once delayed a
// 16 000-task node's start by seconds).
func BenchmarkValidateForest(b *testing.B) {
	nop := func(context.Context) error { return nil }
	var specs []*taskSpec
	for i := range 5000 {
		root := fmt.Sprintf("t%05d", i)
		specs = append(specs, newTaskSpec(root, "* * * * * *", nop, nil))
		prev := root
		for j := 1; j < 4; j++ {
			name := fmt.Sprintf("%s.s%d", root, j)
			if j == 3 && i%10 == 0 {
				specs = append(specs, newTaskSpec(name, "", nop, []Option{Parents(prev, root)}))
				continue
			}
			specs = append(specs, newTaskSpec(name, "", nop, []Option{Parent(prev)}))
			prev = name
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := validateForest(specs); err != nil {
			b.Fatal(err)
		}
	}
}
