package checker

import (
	"testing"
	"time"
)

func TestCheckRegister(t *testing.T) {
	init := RegisterState{Exists: true, ETag: "e0", Value: "v0"}
	get := func(c int, at int64, etag, value string) RegisterOp {
		return RegisterOp{Client: c, Call: at, Return: at + 1, Request: RegisterGet, Answer: AnswerOK, ETag: etag, Value: value}
	}
	cas := func(c int, at int64, ifMatch string, a RegisterAnswer, etag, value string) RegisterOp {
		return RegisterOp{Client: c, Call: at, Return: at + 1, Request: RegisterCAS, IfMatch: ifMatch, Answer: a, ETag: etag, Value: value}
	}
	cases := []struct {
		name string
		ops  []RegisterOp
		want Verdict
	}{
		{"chain", []RegisterOp{get(0, 10, "e0", "v0"), cas(0, 20, "e0", AnswerOK, "e1", "v1"), get(1, 30, "e1", "v1"),
			cas(1, 40, "e0", AnswerRefused, "", "x")}, Pass},
		{"two winners on one ETag", []RegisterOp{cas(0, 10, "e0", AnswerOK, "e1", "v1"), cas(1, 20, "e0", AnswerOK, "e2", "v2")}, Fail},
		{"refused though the condition held", []RegisterOp{cas(0, 10, "e0", AnswerRefused, "", "v1")}, Fail},
		{"unanswered write revealed by a read", []RegisterOp{cas(0, 10, "e0", AnswerUnknown, "", "v1"), get(1, 30, "e9", "v1")}, Pass},
		{"unanswered write never applied", []RegisterOp{cas(0, 10, "e0", AnswerUnknown, "", "v1"), get(1, 30, "e0", "v0")}, Pass},
		{"a read of a value nobody wrote", []RegisterOp{cas(0, 10, "e0", AnswerOK, "e1", "v1"), get(1, 30, "e1", "v7")}, Fail},
		{"a stale read after the write returned", []RegisterOp{cas(0, 10, "e0", AnswerOK, "e1", "v1"), get(1, 30, "e0", "v0")}, Fail},
	}
	for _, c := range cases {
		if got := CheckRegister(init, c.ops, 5*time.Second); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
