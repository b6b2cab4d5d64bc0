package stack

import "testing"

func TestPushPop(t *testing.T) {
	var s Stack[int]
	s.Push(1)
	s.Push(2)
	if v, ok := s.Pop(); !ok || v != 2 {
		t.Fatalf("Pop() = %v, %v; want 2, true", v, ok)
	}
	if s.Len() != 1 {
		t.Fatalf("Len() = %d; want 1", s.Len())
	}
}

func TestPopEmpty(t *testing.T) {
	var s Stack[string]
	if _, ok := s.Pop(); ok {
		t.Fatal("Pop on an empty stack returned ok")
	}
}
