import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateFilter } from '../../../src/http/filter/bexpr-eval.js';
import { FilterSyntaxError, parseFilter } from '../../../src/http/filter/bexpr-parse.js';

const job = {
  ID: 'web-api',
  Status: 'running',
  Priority: 50,
  Stop: false,
  Datacenters: ['dc1', 'dc2'],
  Meta: { team: 'infra', 'cost-center': 'a1' },
  TaskGroups: [
    { Name: 'web', Count: 2, Tasks: [{ Name: 'server', Driver: 'docker' }] },
    { Name: 'cache', Count: 1, Tasks: [{ Name: 'redis', Driver: 'raw_exec' }] },
  ],
  Periodic: null,
  Description: '',
  Constraints: [],
};

const match = (expr: string, datum: unknown = job) => evaluateFilter(parseFilter(expr), datum);

test('filter: each operator on the value types Nomad objects carry', () => {
  const rows: [string, boolean][] = [
    ['Status == "running"', true],
    ['Status == running', true],
    ['Status == `running`', true],
    ['Status != "running"', false],
    ['Status != "dead"', true],
    ['Priority == 50', true],
    ['Priority == "50"', true],
    ['Priority != 51', true],
    ['Stop == false', true],
    ['Stop == true', false],
    ['"dc1" in Datacenters', true],
    ['"dc3" in Datacenters', false],
    ['"dc3" not in Datacenters', true],
    ['dc2 in Datacenters', true],
    ['Datacenters contains "dc2"', true],
    ['Datacenters not contains "dc2"', false],
    ['ID contains "api"', true],
    ['"web" in ID', true],
    ['"team" in Meta', true],
    ['"owner" in Meta', false],
    ['ID matches "^web-"', true],
    ['ID matches "^api"', false],
    ['ID not matches "^api"', true],
    ['Meta.team == "infra"', true],
    ['Meta["cost-center"] == "a1"', true],
    ['Meta.owner == "x"', false],
    ['Meta.owner != "x"', true],
    ['Meta.owner is empty', true],
    ['Meta is not empty', true],
    ['Periodic is empty', true],
    ['Description is empty', true],
    ['Constraints is empty', true],
    ['Datacenters is empty', false],
    ['Datacenters is not empty', true],
    ['TaskGroups.Name contains "cache"', true],
    ['"web" in TaskGroups.Name', true],
    ['"db" in TaskGroups.Name', false],
    ['TaskGroups.Name == "web"', true],
    ['TaskGroups.Tasks.Driver contains "docker"', true],
    ['TaskGroups.Tasks.Driver contains "exec"', false],
    ['NoSuchField == "x"', false],
    // go-bexpr's nil: a nil pointer, map or slice (JSON null) or a missing field; never a bool,
    // a string or an empty list that is there.
    ['Periodic is nil', true],
    ['Periodic is not nil', false],
    ['Meta is nil', false],
    ['Meta.owner is nil', true],
    ['Stop is not nil', true],
    ['Description is nil', false],
    ['Constraints is nil', false],
  ];
  for (const [expr, want] of rows) assert.equal(match(expr), want, expr);
});

test('filter: the expressions Nomad\'s CLI sends (job dispatch, job periodic force)', () => {
  const parameterized = { ...job, ID: 'batch', ParentID: '', ParameterizedJob: { Payload: 'optional' }, Periodic: null };
  const child = { ...parameterized, ID: 'batch/dispatch-1', ParentID: 'batch' };
  const periodic = { ...job, ID: 'cron', ParentID: '', ParameterizedJob: null, Periodic: { Enabled: true, Spec: '* * * * *' } };
  const dispatchable = 'ParentID == "" and ParameterizedJob is not nil';
  assert.deepEqual([parameterized, child, periodic, job].filter((j) => match(dispatchable, j)).map((j) => j.ID), ['batch']);
  assert.deepEqual([parameterized, child, periodic, job].filter((j) => match('Periodic is not nil', j)).map((j) => j.ID), ['cron']);
});

test('filter: and, or, not and parentheses with the usual precedence', () => {
  const rows: [string, boolean][] = [
    ['Status == "running" and Priority == 50', true],
    ['Status == "running" and Priority == 1', false],
    ['Status == "dead" or Priority == 50', true],
    ['not Status == "dead"', true],
    ['not (Status == "running")', false],
    ['Status == "dead" and Priority == 1 or Meta.team == "infra"', true],
    ['Status == "dead" and (Priority == 1 or Meta.team == "infra")', false],
    ['not (Status == "dead" or Stop == true) and "dc1" in Datacenters', true],
    ['((Status == "running"))', true],
  ];
  for (const [expr, want] of rows) assert.equal(match(expr), want, expr);
});

test('filter: malformed expressions throw an error naming the problem and its position', () => {
  const rows: [string, RegExp][] = [
    ['', /empty filter expression/],
    ['Status ==', /expected a value .* at position 10, found end of expression/],
    ['Status = "x"', /unexpected "=" at position 8/],
    ['Status === "x"', /position/],
    ['Status "running"', /expected an operator/],
    ['(Status == "x"', /expected "\)"/],
    ['Status == "x")', /expected "and", "or" or the end/],
    ['Status == "unterminated', /unterminated string starting at position 11/],
    ['Status is full', /expected "empty" or "nil" after "is"/],
    ['Status is not full', /expected "empty" or "nil" after "is not"/],
    ['ID matches "("', /invalid regular expression/],
    ['and == "x"', /expected a selector/],
    ['Meta[team] == "x"', /expected a quoted key inside "\[\]"/],
    ['Status == "a" and', /expected a selector/],
    ['Status € "a"', /unexpected "€"/],
  ];
  for (const [expr, want] of rows) {
    assert.throws(() => parseFilter(expr), (err: unknown) => err instanceof FilterSyntaxError && want.test(err.message), expr);
  }
});

test('filter: string escapes and values that look like keywords when quoted', () => {
  assert.equal(match('Meta.team == "in\\"fra"', { Meta: { team: 'in"fra' } }), true);
  assert.equal(match('Name == "and"', { Name: 'and' }), true);
  assert.equal(match('Name == "and" and not Name == "or"', { Name: 'and' }), true);
});
