package compat

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/nomad/api"
)

// Every answer the suite's Go clients receive goes through shapeTransport, which checks its body
// strictly (shape_check_test.go) against the api type of its route: a Caravan answer one field
// of which a Go client cannot decode breaks every list that holds it (issue 27, item 3), and a
// pointer Nomad always fills that Caravan leaves nil panics the nomad CLI (item 4).

// shapeRoute maps a request to the api type its answer decodes into.
type shapeRoute struct {
	method  string
	pattern *regexp.Regexp
	// target is a new pointer to the answer's Go type; nil marks a stream or a body no client
	// decodes (not read, so that a stream is not buffered).
	target func() any
}

func route(method, pattern string, target func() any) shapeRoute {
	return shapeRoute{method, regexp.MustCompile("^" + pattern + "$"), target}
}

func as[T any]() func() any { return func() any { return new(T) } }

// anyJSON is the target of answers the api client reads one field of (or none) through an
// unexported struct: the body must be JSON, nothing more.
var anyJSON = as[any]()

const seg = `[^/]+`

// shapeRoutes: the answers of the routes the suite calls, by the type Nomad's api module decodes
// them into. A JSON answer on a route missing here is itself a failure: add its type.
var shapeRoutes = []shapeRoute{
	// Streams and files: never buffered.
	route("GET", "/v1/event/stream", nil),
	route("GET", "/v1/agent/monitor", nil),
	route("GET", "/v1/operator/snapshot", nil),
	route("PUT", "/v1/operator/snapshot", nil),
	route("GET", "/v1/client/fs/(logs|stream|cat|readat)/"+seg, nil),

	route("GET", "/v1/jobs", as[[]*api.JobListStub]()),
	route("PUT|POST", "/v1/jobs", as[api.JobRegisterResponse]()),
	route("PUT|POST", "/v1/jobs/parse", as[api.Job]()),
	route("PUT|POST", "/v1/validate/job", as[api.JobValidateResponse]()),
	route("GET", "/v1/job/"+seg, as[api.Job]()),
	route("PUT|POST", "/v1/job/"+seg, as[api.JobRegisterResponse]()),
	route("DELETE", "/v1/job/"+seg, as[api.JobDeregisterResponse]()),
	route("GET", "/v1/job/"+seg+"/allocations", as[[]*api.AllocationListStub]()),
	route("GET", "/v1/job/"+seg+"/evaluations", as[[]*api.Evaluation]()),
	route("GET", "/v1/job/"+seg+"/deployments", as[[]*api.Deployment]()),
	// null when the job has had no deployment, as Nomad answers it.
	route("GET", "/v1/job/"+seg+"/deployment", as[*api.Deployment]()),
	route("GET", "/v1/job/"+seg+"/summary", as[api.JobSummary]()),
	route("GET", "/v1/job/"+seg+"/versions", as[api.JobVersionsResponse]()),
	route("GET", "/v1/job/"+seg+"/submission", as[api.JobSubmission]()),
	route("GET", "/v1/job/"+seg+"/services", as[[]*api.ServiceRegistration]()),
	route("GET", "/v1/job/"+seg+"/scale", as[api.JobScaleStatusResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/scale", as[api.JobRegisterResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/plan", as[api.JobPlanResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/evaluate", as[api.JobRegisterResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/revert", as[api.JobRegisterResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/stable", as[api.JobStabilityResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/dispatch", as[api.JobDispatchResponse]()),
	route("PUT|POST", "/v1/job/"+seg+"/periodic/force", anyJSON),
	route("PUT|POST|DELETE", "/v1/job/"+seg+"/versions/"+seg+"/tag", anyJSON),

	route("GET", "/v1/allocations", as[[]*api.AllocationListStub]()),
	route("GET", "/v1/allocation/"+seg, as[api.Allocation]()),
	route("PUT|POST", "/v1/allocation/"+seg+"/stop", as[api.AllocStopResponse]()),
	route("GET", "/v1/allocation/"+seg+"/services", as[[]*api.ServiceRegistration]()),
	route("GET", "/v1/client/allocation/"+seg+"/checks", as[api.AllocCheckStatuses]()),
	route("GET", "/v1/client/allocation/"+seg+"/stats", as[api.AllocResourceUsage]()),
	route("GET|PUT|POST", "/v1/client/allocation/"+seg+"/(gc|restart|signal)", anyJSON),
	route("GET|PUT|POST", "/v1/client/gc", anyJSON),
	route("GET", "/v1/client/stats", as[api.HostStats]()),
	route("GET|PUT|POST", "/v1/client/metadata", as[api.NodeMetaResponse]()),

	route("GET", "/v1/evaluations", as[[]*api.Evaluation]()),
	route("GET", "/v1/evaluations/count", as[api.EvalCountResponse]()),
	route("DELETE", "/v1/evaluations", as[api.EvalDeleteResponse]()),
	route("GET", "/v1/evaluation/"+seg, as[api.Evaluation]()),
	route("GET", "/v1/evaluation/"+seg+"/allocations", as[[]*api.AllocationListStub]()),

	route("GET", "/v1/deployments", as[[]*api.Deployment]()),
	route("GET", "/v1/deployment/"+seg, as[api.Deployment]()),
	route("GET", "/v1/deployment/allocations/"+seg, as[[]*api.AllocationListStub]()),
	route("PUT|POST", "/v1/deployment/(fail|pause|promote|unblock|allocation-health)/"+seg, as[api.DeploymentUpdateResponse]()),

	route("GET", "/v1/node/pools", as[[]*api.NodePool]()),
	route("PUT|POST", "/v1/node/pools", anyJSON),
	route("GET", "/v1/node/pool/"+seg, as[api.NodePool]()),
	route("DELETE", "/v1/node/pool/"+seg, anyJSON),
	route("GET", "/v1/node/pool/"+seg+"/nodes", as[[]*api.NodeListStub]()),
	route("GET", "/v1/node/pool/"+seg+"/jobs", as[[]*api.JobListStub]()),
	route("GET", "/v1/nodes", as[[]*api.NodeListStub]()),
	route("GET", "/v1/node/"+seg, as[api.Node]()),
	route("GET", "/v1/node/"+seg+"/allocations", as[[]*api.Allocation]()),
	route("PUT|POST", "/v1/node/"+seg+"/drain", as[api.NodeDrainUpdateResponse]()),
	route("PUT|POST", "/v1/node/"+seg+"/eligibility", as[api.NodeEligibilityUpdateResponse]()),
	route("PUT|POST", "/v1/node/"+seg+"/evaluate", anyJSON),
	route("PUT|POST", "/v1/node/"+seg+"/purge", as[api.NodePurgeResponse]()),

	route("GET", "/v1/vars", as[[]*api.VariableMetadata]()),
	route("GET|PUT", "/v1/var/.+", as[api.Variable]()),
	route("DELETE", "/v1/var/.+", anyJSON),

	route("GET", "/v1/acl/token/self", as[api.ACLToken]()),
	route("GET", "/v1/acl/token/"+seg, as[api.ACLToken]()),
	route("PUT|POST", "/v1/acl/token", as[api.ACLToken]()),
	route("PUT|POST", "/v1/acl/bootstrap", as[api.ACLToken]()),
	route("GET", "/v1/acl/tokens", as[[]*api.ACLTokenListStub]()),
	route("GET", "/v1/acl/policies", as[[]*api.ACLPolicyListStub]()),
	route("GET", "/v1/acl/policy/"+seg, as[api.ACLPolicy]()),
	route("PUT|POST|DELETE", "/v1/acl/policy/"+seg, anyJSON),

	route("GET", "/v1/agent/self", as[api.AgentSelf]()),
	route("GET", "/v1/agent/host", as[api.HostDataResponse]()),
	route("GET", "/v1/agent/members", as[api.ServerMembers]()),
	route("GET", "/v1/operator/scheduler/configuration", as[api.SchedulerConfigurationResponse]()),
	route("PUT|POST", "/v1/operator/scheduler/configuration", as[api.SchedulerSetConfigurationResponse]()),
	route("GET", "/v1/operator/license", anyJSON),
	route("GET", "/v1/metrics", as[api.MetricsSummary]()),
	route("PUT|POST", "/v1/system/(gc|reconcile/summaries)", anyJSON),
	route("GET", "/v1/services", as[[]*api.ServiceRegistrationListStub]()),
	route("GET", "/v1/service/"+seg, as[[]*api.ServiceRegistration]()),
}

func (r shapeRoute) matches(req *http.Request) bool {
	return regexp.MustCompile("^("+r.method+")$").MatchString(req.Method) && r.pattern.MatchString(req.URL.EscapedPath())
}

// shapeLog gathers, across the suite, what the checked answers got wrong: one line per distinct
// problem, with the request that showed it first.
type shapeLog struct {
	mu        sync.Mutex
	seen      map[string]bool
	problems  []string
	unknown   map[string]string
	unchecked map[string]bool
	absent    map[string]string
	checked   int
}

var shapes = &shapeLog{seen: map[string]bool{}, unknown: map[string]string{}, unchecked: map[string]bool{}, absent: map[string]string{}}

func (l *shapeLog) add(req string, p *shapeProblems) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checked++
	for _, e := range sortedUnique(append(append([]string{}, p.typeErrors...), p.missing...)) {
		if !l.seen[e] {
			l.seen[e] = true
			l.problems = append(l.problems, fmt.Sprintf("%s: %s", req, e))
		}
	}
	for _, u := range sortedUnique(p.unknown) {
		if _, ok := l.unknown[u]; !ok {
			l.unknown[u] = req
		}
	}
	for _, u := range sortedUnique(p.absent) {
		if _, ok := l.absent[u]; !ok {
			l.absent[u] = req
		}
	}
}

// report is every problem recorded so far, unknown fields not in knownExtraFields included.
func (l *shapeLog) report() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string{}, l.problems...)
	for u, req := range l.unknown {
		if !knownExtra(u) {
			out = append(out, fmt.Sprintf("%s: unknown field %s (not in Nomad's api struct: misspelt, or add it to knownExtraFields with why)", req, u))
		}
	}
	for u := range l.unchecked {
		out = append(out, fmt.Sprintf("%s: a JSON answer on a route with no api type in shapeRoutes", u))
	}
	return sortedUnique(out)
}

// absentReport lists the api struct fields no checked answer carried as a key at all, for
// review with -v (a Go client reads a missing key as its zero value or nil, as it reads Nomad's
// null; the ones Nomad always fills are checked by alwaysSent).
func (l *shapeLog) absentReport() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for u, req := range l.absent {
		out = append(out, fmt.Sprintf("%s (first in %s)", u, req))
	}
	return sortedUnique(out)
}

// shapeTransport records and checks each answer of the http.Transport it wraps.
type shapeTransport struct{ next http.RoundTripper }

// newShapeClient is an *http.Client for api.Config.HttpClient whose answers are checked.
func newShapeClient() *http.Client {
	return &http.Client{Transport: shapeTransport{next: http.DefaultTransport.(*http.Transport).Clone()}}
}

func (s shapeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	var r *shapeRoute
	for i := range shapeRoutes {
		if shapeRoutes[i].matches(req) {
			r = &shapeRoutes[i]
			break
		}
	}
	name := req.Method + " " + req.URL.EscapedPath()
	if r == nil {
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			shapes.mu.Lock()
			shapes.unchecked[name] = true
			shapes.mu.Unlock()
		}
		return resp, nil
	}
	if r.target == nil {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	plain := body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if plain, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(plain)) == 0 {
		return resp, nil
	}
	if req.URL.RawQuery != "" {
		name += "?" + req.URL.RawQuery
	}
	// A parsed job is the api module's Canonicalize of a submission, not a stored job.
	stored := req.URL.Path != "/v1/jobs/parse"
	shapes.add(name, checkShape(plain, r.target(), stored))
	return resp, nil
}

// knownExtraFields: keys Caravan sends that Nomad's api structs lack, reviewed one by one. All
// but the last are fields Nomad's server sends too (its nomad/structs type has them, the api
// one does not), so a Go client ignores them in Caravan's answer as in Nomad's. Every *Response
// also carries Nomad's QueryMeta/WriteMeta keys (metaKeys).
var knownExtraFields = map[string]bool{
	"api.JobDeregisterResponse.VolumeEvalID":        true, // structs.JobDeregisterResponse
	"api.JobDeregisterResponse.VolumeEvalIndex":     true,
	"api.Allocation.SharedResources":                true, // structs.Allocation (deprecated, still filled)
	"api.AllocatedResources.TaskLifecycles":         true, // structs.AllocatedResources
	"api.AllocationListStub.DesiredTransition":      true, // structs.AllocListStub
	"api.HostStats.Timestamp":                       true, // client/stats.HostStats
	"api.Evaluation.LeaderACL":                      true, // structs.Evaluation; always "" in an answer
	"api.JobSubmission.JobID":                       true, // structs.JobSubmission
	"api.JobSubmission.Namespace":                   true,
	"api.JobSubmission.Version":                     true,
	"api.JobSubmission.JobModifyIndex":              true,
	"api.JobListStub.NodePool":                      true, // structs.JobListStub
	"api.JobListStub.Multiregion":                   true,
	"api.Node.ComputedClass":                        true, // structs.Node
	"api.Node.SecretID":                             true, // structs.Node, blanked by Sanitize
	"api.NodeReservedCpuResources.ReservedCpuCores": true, // structs.NodeReservedCpuResources
	"api.NodeListStub.HostVolumes":                  true, // structs.NodeListStub
	"api.DeploymentState.AutoPromote":               true, // structs.DeploymentState
	"api.RescheduleEvent.Delay":                     true, // structs.RescheduleEvent
	"api.ACLPolicyListStub.Hash":                    true, // structs.ACLPolicyListStub
	"api.ACLTokenListStub.Hash":                     true, // structs.ACLTokenListStub
	// Caravan's own: the stub names the allocation it replaced, as the full allocation does.
	"api.AllocationListStub.PreviousAllocation": true,
}

// metaKeys: Nomad's structs.QueryMeta / WriteMeta, embedded in every RPC response it answers.
var metaKeys = map[string]bool{"Index": true, "LastContact": true, "KnownLeader": true, "NextToken": true}

func knownExtra(field string) bool {
	typ, key, _ := strings.Cut(strings.TrimPrefix(field, "api."), ".")
	return knownExtraFields[field] || (strings.HasSuffix(typ, "Response") && metaKeys[key])
}
