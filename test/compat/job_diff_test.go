package compat

import (
	"testing"
)

// Nomad's client decodes the plan's annotated diff and the versions' diffs.
func TestPlanAndVersionDiffs(t *testing.T) {
	register(t, "d-web", "infra", "1")
	changed, err := client.Jobs().ParseHCL(jobHCL("d-web", "web", "2"), true)
	if err != nil {
		t.Fatal(err)
	}
	plan, _, err := client.Jobs().Plan(changed, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := plan.Diff
	if d == nil || d.Type != "Edited" || d.ID != "d-web" {
		t.Fatalf("plan diff: %+v", d)
	}
	if len(d.Fields) != 1 || d.Fields[0].Name != "Meta[team]" || d.Fields[0].Old != "infra" || d.Fields[0].New != "web" {
		t.Fatalf("job fields: %+v", d.Fields)
	}
	if len(d.TaskGroups) != 1 || len(d.TaskGroups[0].Tasks) != 1 {
		t.Fatalf("groups: %+v", d.TaskGroups)
	}
	task := d.TaskGroups[0].Tasks[0]
	if task.Type != "Edited" || len(task.Annotations) != 1 || task.Annotations[0] != "forces create/destroy update" {
		t.Fatalf("task diff: %+v", task)
	}
	if len(task.Fields) != 1 || task.Fields[0].Name != "Env[V]" || task.Fields[0].New != "2" {
		t.Fatalf("task fields: %+v", task.Fields)
	}
	// The first version's allocation may or may not be placed yet: one create either way.
	u := d.TaskGroups[0].Updates
	if u["create/destroy update"]+u["create"] != 1 {
		t.Fatalf("group updates: %+v", d.TaskGroups[0].Updates)
	}

	if _, _, err := client.Jobs().Register(changed, nil); err != nil {
		t.Fatal(err)
	}
	versions, diffs, _, err := client.Jobs().Versions("d-web", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 2 || len(diffs) != 1 || diffs[0].Type != "Edited" || len(diffs[0].TaskGroups) != 1 {
		t.Fatalf("versions %d diffs %+v", len(versions), diffs)
	}
}
