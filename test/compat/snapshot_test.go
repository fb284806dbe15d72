package compat

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// Nomad's Go client's Operator().Snapshot streams the whole state: a gzipped file of JSON lines
// from a header to an end line.
func TestOperatorSnapshotSave(t *testing.T) {
	rc, err := client.Operator().Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var first, last string
	for sc.Scan() {
		if first == "" {
			first = sc.Text()
		}
		last = sc.Text()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, `"t":"header"`) || !strings.Contains(last, `"t":"end"`) {
		t.Fatalf("snapshot: first %q last %q", first, last)
	}
}

// Operator().SnapshotRestore sends a file Operator().Snapshot saved back to the cluster: the
// state is the saved one again (a variable deleted since is back, one written since is gone).
// A file that is not a snapshot is refused and changes nothing.
func TestOperatorSnapshotRestore(t *testing.T) {
	vars := client.Variables()
	if _, _, err := vars.Create(&api.Variable{Path: "restore-compat/kept", Items: api.VariableItems{"k": "v"}}, nil); err != nil {
		t.Fatal(err)
	}
	rc, err := client.Operator().Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vars.Delete("restore-compat/kept", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vars.Create(&api.Variable{Path: "restore-compat/later", Items: api.VariableItems{"k": "x"}}, nil); err != nil {
		t.Fatal(err)
	}

	if _, err := client.Operator().SnapshotRestore(bytes.NewReader([]byte("not a snapshot")), nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("restoring garbage: want a 400, got %v", err)
	}
	if _, _, err := vars.Read("restore-compat/later", nil); err != nil {
		t.Fatalf("a refused restore changed the state: %v", err)
	}

	wm, err := client.Operator().SnapshotRestore(bytes.NewReader(saved), nil)
	if err != nil {
		t.Fatal(err)
	}
	if wm == nil || wm.LastIndex == 0 {
		t.Fatalf("restore: want the restore's index, got %+v", wm)
	}
	if v, _, err := vars.Read("restore-compat/kept", nil); err != nil || v.Items["k"] != "v" {
		t.Fatalf("restored variable: %v %v", v, err)
	}
	if _, _, err := vars.Read("restore-compat/later", nil); err == nil {
		t.Fatal("a variable written after the save survived the restore")
	}
	if _, err := vars.Delete("restore-compat/kept", nil); err != nil {
		t.Fatal(err)
	}
}
