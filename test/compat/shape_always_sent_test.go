package compat

import (
	"reflect"
	"time"

	"github.com/hashicorp/nomad/api"
)

// What a Nomad server always sends, field by field, derived from its Go structs (there is no
// real Nomad here to diff against):
//
//   - The api module makes most scalar fields of Job, TaskGroup, Task and their blocks pointers
//     (*string, *int, *bool…) so that a submitted job can leave them out; the server's
//     nomad/structs types hold them as values, so a server's answer always carries them. Every
//     scalar pointer of an api struct decoded from a server's answer must therefore be non-nil,
//     except the ones that are pointers in nomad/structs too (scalarPointerMayBeNil).
//   - Pointers to blocks and maps that the server always fills, listed in alwaysSent with where
//     Nomad fills them.

// scalarPointerMayBeNil: scalar pointers that are pointers (or absent) in nomad/structs too, so a
// nil one is what Nomad sends as well.
var scalarPointerMayBeNil = map[string]bool{
	// structs.TaskGroup: *time.Duration / *bool (a disconnect block replaces them).
	"api.TaskGroup.StopAfterClientDisconnect": true,
	"api.TaskGroup.MaxClientDisconnect":       true,
	"api.TaskGroup.PreventRescheduleOnLost":   true,
	"api.TaskGroup.ShutdownDelay":             true,
	"api.TaskGroup.MaxRunDuration":            true,
	// structs.Job: the dispatch idempotency token is only in the dispatched job's meta.
	"api.Job.DispatchIdempotencyToken": true,
	// structs.DisconnectStrategy.StopOnClientAfter and LostAfter-like fields are pointers.
	"api.DisconnectStrategy.StopOnClientAfter": true,
	"api.DisconnectStrategy.Replace":           true,
	// structs.TaskLifecycleConfig / structs.ScalingPolicy hold these as pointers too.
	"api.ScalingPolicy.Min":     true,
	"api.ScalingPolicy.Enabled": true,
	// structs.Variable has no lock unless one is held.
	"api.VariableLock.ID": true,
	// structs.DesiredTransition holds every one as a *bool: null until set.
	"api.DesiredTransition.Migrate":                 true,
	"api.DesiredTransition.MigrateDisablePlacement": true,
	"api.DesiredTransition.Reschedule":              true,
	"api.DesiredTransition.ForceReschedule":         true,
	"api.DesiredTransition.NoShutdownDelay":         true,
	// structs.AllocDeploymentStatus.Healthy is a *bool: null until the health is known.
	"api.AllocDeploymentStatus.Healthy": true,
	// structs.DeploymentUpdateResponse.RevertedJobVersion is a *uint64: null unless reverted.
	"api.DeploymentUpdateResponse.RevertedJobVersion": true,
	// The api module's pre-1.5.4 spelling; structs.LogConfig has Disabled only.
	"api.LogConfig.Enabled": true,
}

// alwaysSent: pointers, maps and slices a Nomad server never answers nil, per api type.
var alwaysSent = map[reflect.Type][]string{
	// client.setupNode fills every one of these before the node first registers (maps made
	// empty, ReservedResources zeros when nothing is reserved); `nomad node status -self` and
	// `-verbose` dereference NodeResources and ReservedResources unchecked.
	reflect.TypeFor[api.Node](): {"Attributes", "Links", "Drivers", "CSIControllerPlugins", "CSINodePlugins", "Meta",
		"NodeResources", "ReservedResources", "Resources", "Reserved", "Events"},
	// The scheduler writes AllocatedResources and Metrics into every allocation it places, and
	// the state store denormalises the job into it.
	reflect.TypeFor[api.Allocation](): {"Job", "AllocatedResources", "Metrics"},
	// structs.Job.Update is an UpdateStrategy value; structs.Job.Datacenters is always set
	// (defaulted to ["*"]); Meta is made by Canonicalize.
	reflect.TypeFor[api.Job](): {"Update", "Datacenters", "TaskGroups"},
	// structs.TaskGroup.Canonicalize fills RestartPolicy and EphemeralDisk for every type.
	reflect.TypeFor[api.TaskGroup](): {"RestartPolicy", "EphemeralDisk", "Tasks"},
	// structs.Task.Canonicalize fills Resources and LogConfig.
	reflect.TypeFor[api.Task](): {"Resources", "LogConfig"},
	// The job list's row carries its summary; a summary always has its Summary map and a
	// Children summary (the state store makes both with the summary).
	reflect.TypeFor[api.JobListStub](): {"JobSummary", "Datacenters"},
	reflect.TypeFor[api.JobSummary]():  {"Summary", "Children"},
	// A deployment is created with a state per task group.
	reflect.TypeFor[api.Deployment](): {"TaskGroups"},
	// A node's row always has its drivers.
	reflect.TypeFor[api.NodeListStub](): {"Drivers"},
}

var scalarPointerElem = map[reflect.Kind]bool{
	reflect.String: true, reflect.Bool: true, reflect.Int: true, reflect.Int8: true, reflect.Int16: true,
	reflect.Int32: true, reflect.Int64: true, reflect.Uint: true, reflect.Uint8: true, reflect.Uint16: true,
	reflect.Uint32: true, reflect.Uint64: true, reflect.Float32: true, reflect.Float64: true,
}

var apiPkg = reflect.TypeFor[api.Job]().PkgPath()

// checkAlwaysSent walks a decoded answer and records, by Go type and field, every field above
// that is nil.
func checkAlwaysSent(v reflect.Value, path string, p *shapeProblems) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkAlwaysSent(v.Elem(), path, p)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			checkAlwaysSent(v.Index(i), path+"[]", p)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			checkAlwaysSent(v.MapIndex(k), path+"[*]", p)
		}
	case reflect.Struct:
		t := v.Type()
		if t.PkgPath() != apiPkg || t == reflect.TypeFor[time.Time]() {
			return
		}
		for _, name := range alwaysSent[t] {
			if f := v.FieldByName(name); f.IsValid() && f.IsNil() {
				p.missing = append(p.missing, "Nomad always sends "+t.String()+"."+name+", missing or null (at "+path+")")
			}
		}
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			f := v.Field(i)
			key := t.String() + "." + sf.Name
			if sf.Type.Kind() == reflect.Pointer && scalarPointerElem[sf.Type.Elem().Kind()] && f.IsNil() && !scalarPointerMayBeNil[key] {
				p.missing = append(p.missing, "Nomad always sends "+key+" (a value in nomad/structs), missing or null (at "+path+")")
			}
			checkAlwaysSent(f, path+"."+sf.Name, p)
		}
	}
}
