package rpn

import "testing"

func TestEval(t *testing.T) {
	cases := map[string]float64{"3 4 +": 7, "3 4 + 2 *": 14, "10 4 /": 2.5, "5 1 2 + 4 * + 3 -": 14}
	for expr, want := range cases {
		t.Run(expr, func(t *testing.T) {
			got, err := Eval(expr)
			if err != nil || got != want {
				t.Fatalf("Eval(%q) = %v, %v; want %v", expr, got, err, want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for _, expr := range []string{"+", "1 0 /", "1 2", "x"} {
		if _, err := Eval(expr); err == nil {
			t.Errorf("Eval(%q) succeeded; want an error", expr)
		}
	}
}
