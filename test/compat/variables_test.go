package compat

import (
	"context"
	"errors"
	"fmt"
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

// Nomad's Go client's variable locks: AcquireLock answers the lock's ID, a second acquire is a
// conflict, RenewLock and ReleaseLock with the ID succeed, and the Locks/LockLeaser helpers of
// `nomad var lock` acquire, renew and release around a protected function.
func TestVariableLocks(t *testing.T) {
	vars := client.Variables()
	v, _, err := vars.AcquireLock(&api.Variable{Path: "compat/lock", Items: api.VariableItems{"k": "v"}, Lock: &api.VariableLock{TTL: "30s", LockDelay: "5s"}}, nil)
	if err != nil || v.Lock == nil || v.Lock.ID == "" || v.Lock.TTL != "30s" || v.Items["k"] != "v" {
		t.Fatalf("acquire: %+v %v", v, err)
	}
	if _, _, err := vars.AcquireLock(&api.Variable{Path: "compat/lock", Lock: &api.VariableLock{TTL: "30s"}}, nil); err == nil {
		t.Fatal("a second acquire of a held lock succeeded")
	}
	meta, _, err := vars.RenewLock(v, nil)
	if err != nil || meta.Lock == nil || meta.Lock.ID != v.Lock.ID {
		t.Fatalf("renew: %+v %v", meta, err)
	}
	rel, _, err := vars.ReleaseLock(&api.Variable{Path: "compat/lock", Lock: &api.VariableLock{ID: v.Lock.ID}}, nil)
	if err != nil || rel.Lock != nil || rel.Items["k"] != "v" {
		t.Fatalf("release: %+v %v", rel, err)
	}

	locks, err := client.Locks(api.WriteOptions{}, api.Variable{Path: "compat/leased", Lock: &api.VariableLock{TTL: "10s", LockDelay: "1s"}})
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	leaser := client.NewLockLeaser(locks)
	err = leaser.Start(context.Background(), func(ctx context.Context) error {
		held, _, err := vars.Read("compat/leased", nil)
		if err != nil || held.Lock == nil {
			return fmt.Errorf("the variable is not locked while the protected function runs: %+v %v", held, err)
		}
		ran = true
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("lock leaser: ran=%v %v", ran, err)
	}
	if after, _, err := vars.Read("compat/leased", nil); err != nil || after.Lock != nil {
		t.Fatalf("after the leaser: %+v %v", after, err)
	}
	for _, p := range []string{"compat/lock", "compat/leased"} {
		if _, err := vars.Delete(p, nil); err != nil {
			t.Fatal(err)
		}
	}
}
