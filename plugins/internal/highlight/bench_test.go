package highlight

import "testing"

const benchGo = "func f1(x int) int {\n\tif x < 2 {\n\t\treturn x\n\t}\n\treturn f(x-1) + f(x-2)\n}\n"

func BenchmarkSpansGo(b *testing.B) {
	b.SetBytes(int64(len(benchGo)))
	for b.Loop() {
		if NewBudget().Spans("go", benchGo) == nil {
			b.Fatal("plain")
		}
	}
}
