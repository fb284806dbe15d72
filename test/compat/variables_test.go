package compat

import (
	"errors"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// Nomad's Go client's Variables API: create, checked create/update/delete with a stale index
// answered as ErrCASConflict carrying the current variable, read, peek, list and prefix list.
func TestVariablesCheckAndSet(t *testing.T) {
	vars := client.Variables()
	v, _, err := vars.CheckedCreate(&api.Variable{Path: "compat/db", Items: api.VariableItems{"user": "u"}}, nil)
	if err != nil || v.ModifyIndex == 0 || v.Namespace != "default" || v.Items["user"] != "u" {
		t.Fatalf("checked create: %+v %v", v, err)
	}
	_, _, err = vars.CheckedCreate(&api.Variable{Path: "compat/db", Items: api.VariableItems{"user": "x"}}, nil)
	var conflict api.ErrCASConflict
	if !errors.As(err, &conflict) || conflict.Conflict.ModifyIndex != v.ModifyIndex || conflict.Conflict.Items["user"] != "u" {
		t.Fatalf("second checked create: want a CAS conflict with the current variable, got %v", err)
	}
	v.Items["user"] = "v2"
	up, _, err := vars.CheckedUpdate(v, nil)
	if err != nil || up.ModifyIndex <= v.ModifyIndex || up.CreateIndex != v.CreateIndex {
		t.Fatalf("checked update: %+v %v", up, err)
	}
	got, _, err := vars.Read("compat/db", nil)
	if err != nil || got.Items["user"] != "v2" {
		t.Fatalf("read: %+v %v", got, err)
	}
	if _, _, err := vars.Read("compat/none", nil); !errors.Is(err, api.ErrVariablePathNotFound) {
		t.Fatalf("read missing: %v", err)
	}
	if p, _, err := vars.Peek("compat/none", nil); err != nil || p != nil {
		t.Fatalf("peek missing: %+v %v", p, err)
	}
	if _, _, err := vars.Create(&api.Variable{Path: "compat/other", Items: api.VariableItems{"a": "b"}}, nil); err != nil {
		t.Fatal(err)
	}
	list, _, err := vars.PrefixList("compat/", nil)
	if err != nil || len(list) != 2 || list[0].Path != "compat/db" || list[1].Path != "compat/other" {
		t.Fatalf("prefix list: %+v %v", list, err)
	}
	if _, err := vars.CheckedDelete("compat/db", v.ModifyIndex, nil); !errors.As(err, &conflict) {
		t.Fatalf("stale checked delete: %v", err)
	}
	if _, err := vars.CheckedDelete("compat/db", up.ModifyIndex, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := vars.Delete("compat/other", nil); err != nil {
		t.Fatal(err)
	}
	if list, _, err := vars.PrefixList("compat/", nil); err != nil || len(list) != 0 {
		t.Fatalf("after deletes: %+v %v", list, err)
	}
}
