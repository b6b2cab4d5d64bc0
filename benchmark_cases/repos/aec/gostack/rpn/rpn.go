// Package rpn evaluates expressions in reverse Polish notation.
package rpn

import (
	"fmt"
	"strconv"
	"strings"

	"example.com/gostack/stack"
)

// Eval evaluates a space-separated RPN expression such as "3 4 + 2 *".
func Eval(expr string) (float64, error) {
	var s stack.Stack[float64]
	for _, tok := range strings.Fields(expr) {
		switch tok {
		case "+", "-", "*", "/":
			b, ok1 := s.Pop()
			a, ok2 := s.Pop()
			if !ok1 || !ok2 {
				return 0, fmt.Errorf("not enough operands for %q", tok)
			}
			switch tok {
			case "+":
				s.Push(a + b)
			case "-":
				s.Push(a - b)
			case "*":
				s.Push(a * b)
			case "/":
				if b == 0 {
					return 0, fmt.Errorf("division by zero")
				}
				s.Push(a / b)
			}
		default:
			v, err := strconv.ParseFloat(tok, 64)
			if err != nil {
				return 0, fmt.Errorf("bad token %q", tok)
			}
			s.Push(v)
		}
	}
	if s.Len() != 1 {
		return 0, fmt.Errorf("expression leaves %d values", s.Len())
	}
	v, _ := s.Pop()
	return v, nil
}
