import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HclEvalError } from '../../src/jobspec/hcl2/hcl-eval-error.js';
import { ev, tmpl } from './hcl2-eval-helper.js';

const code = (c: string) => (e: unknown) => e instanceof HclEvalError && e.code === c;

test('literals and operators follow HCL precedence', () => {
  assert.equal(ev('1 + 2 * 3'), 7);
  assert.equal(ev('(1 + 2) * 3'), 9);
  assert.equal(ev('10 % 4 - -1'), 3);
  assert.equal(ev('7 / 2'), 3.5);
  assert.equal(ev('1 < 2 && 2 <= 2 || false'), true);
  assert.equal(ev('!true == false'), true);
  assert.equal(ev('"5" + 1'), 6);
  assert.equal(ev('[1, "a"] == [1, "a"]'), true);
  assert.equal(ev('{a = 1} != {a = 2}'), true);
  assert.equal(ev('1.5e2'), 150);
  assert.equal(ev('null'), null);
  assert.throws(() => ev('1 / 0'), /divide by zero/);
  assert.throws(() => ev('"x" * 2'), /must be a number/);
});

test('conditionals, indexing, attributes and legacy .N index', () => {
  const vars = { l: [10, 20, 30], m: { a: { b: 'deep' } }, on: true };
  assert.equal(ev('var.on ? "yes" : "no"', { vars }), 'yes');
  assert.equal(ev('var.l[1]', { vars }), 20);
  assert.equal(ev('var.l.2', { vars }), 30);
  assert.equal(ev('var.m["a"].b', { vars }), 'deep');
  assert.throws(() => ev('var.l[3]', { vars }), /out of range/);
  assert.throws(() => ev('var.m.zz', { vars }), /does not have an attribute named "zz"/);
  assert.throws(() => ev('"x" ? 1 : 2'), /condition must be a bool/);
});

test('for expressions build lists and maps, filter and group', () => {
  const vars = { l: ['a', 'b', ''], m: { x: 1, y: 2 } };
  assert.deepEqual(ev('[for s in var.l : upper(s) if s != ""]', { vars }), ['A', 'B']);
  assert.deepEqual(ev('[for i, s in var.l : i]', { vars }), [0, 1, 2]);
  assert.deepEqual(ev('{for k, v in var.m : v => k}', { vars }), { 1: 'x', 2: 'y' });
  assert.deepEqual(ev('{for s in ["a", "b", "a"] : s => s...}'), { a: ['a', 'a'], b: ['b'] });
  assert.throws(() => ev('{for s in ["a", "a"] : s => s}'), /duplicate object key "a"/);
});

test('splat expressions', () => {
  const vars = { svcs: [{ name: 'a', port: { n: 1 } }, { name: 'b', port: { n: 2 } }], one: { name: 'solo' } };
  assert.deepEqual(ev('var.svcs[*].name', { vars }), ['a', 'b']);
  assert.deepEqual(ev('var.svcs[*].port.n', { vars }), [1, 2]);
  assert.deepEqual(ev('var.svcs.*.name', { vars }), ['a', 'b']);
  assert.deepEqual(ev('var.one[*].name', { vars }), ['solo']);
  assert.deepEqual(ev('null[*]'), []);
});

test('objects: bare names are literal keys, parenthesised keys are expressions', () => {
  assert.deepEqual(ev('{ a = 1, "b" = 2, (var.k) = 3 }', { vars: { k: 'c' } }), { a: 1, b: 2, c: 3 });
  assert.deepEqual(ev('{\n  a = 1\n  b: "x"\n}'), { a: 1, b: 'x' });
  assert.deepEqual(ev('{ "__proto__" = 1 }'), JSON.parse('{"__proto__":1}'));
  assert.equal(Object.getPrototypeOf(ev('{ "__proto__" = {x = 1} }')), Object.prototype);
});

test('templates: interpolation, escapes, directives and strip markers', () => {
  const vars = { name: 'web', n: 3, on: false, l: ['a', 'b'] };
  assert.equal(tmpl('hello ${var.name}-${var.n}', { vars }), 'hello web-3');
  assert.equal(tmpl('${var.n}', { vars }), 3, 'a lone interpolation keeps its type');
  assert.equal(tmpl('$${literal} %%{x}'), '${literal} %{x}');
  assert.equal(tmpl('%{if var.on}on%{else}off%{endif}', { vars }), 'off');
  assert.equal(tmpl('%{for i, x in var.l}${i}=${x};%{endfor}', { vars }), '0=a;1=b;');
  assert.equal(tmpl('a \n  %{~ if true ~}  \n b %{~ endif}', { vars }), 'ab');
  assert.equal(ev('"q \\"${upper("x")}\\" \\u00e9\\n"'), 'q "X" é\n');
  assert.equal(ev('"nested ${"inner ${1 + 1}"}"'), 'nested inner 2');
  assert.equal(ev('<<EOT\nline ${1}\nEOT'), 'line 1\n');
  assert.equal(ev('<<-EOT\n    a\n      b\n    EOT'), 'a\n  b\n');
  assert.throws(() => tmpl('%{if true}x'), /without %\{endif\}/);
  assert.throws(() => tmpl('${[1]}x'), /cannot include a list/);
});

test('runtime references stay as text for the client', () => {
  assert.equal(tmpl('${NOMAD_ALLOC_ID}'), '${NOMAD_ALLOC_ID}');
  assert.equal(tmpl('${attr.kernel.name}'), '${attr.kernel.name}');
  assert.equal(tmpl('${node.unique.id}'), '${node.unique.id}');
  assert.equal(tmpl('${meta.rack}-x'), '${meta.rack}-x');
  assert.equal(tmpl('${env["HOME"]}'), '${env["HOME"]}');
  assert.equal(tmpl('dir=${NOMAD_TASK_DIR}/conf, ${var.x}', { vars: { x: 1 } }), 'dir=${NOMAD_TASK_DIR}/conf, 1');
});

test('function calls: argument expansion, arity, unknown names', () => {
  assert.equal(ev('max([3, 9, 2]...)'), 9);
  assert.throws(() => ev('upper()'), /upper\(\) takes 1 argument, got 0/);
  assert.throws(() => ev('nosuch(1)'), /call to unknown function "nosuch"/);
  assert.throws(() => ev('timestamp()'), /call to unknown function "timestamp"/);
});

test('try and can catch evaluation errors but not limits', () => {
  assert.equal(ev('try(var.m.missing, "fallback")', { vars: { m: {} } }), 'fallback');
  assert.equal(ev('can(var.l[5])', { vars: { l: [] } }), false);
  assert.equal(ev('can(1 + 1)'), true);
  assert.throws(() => ev('try(upper([]), jsondecode("{"))'), /no expression given to try\(\) succeeded/);
  assert.throws(() => ev('can([for x in range(1000) : [for y in range(1000) : y]])', { limits: { maxSteps: 10_000 } }), code('HCL_LIMIT'));
});

test('convert takes a type expression', () => {
  assert.deepEqual(ev('convert(["1", 2], list(number))'), [1, 2]);
  assert.deepEqual(ev('convert({a = true}, map(string))'), { a: 'true' });
  assert.throws(() => ev('convert("x", number)'), /must be a number/);
});

test('syntax errors name the column; nesting is bounded', () => {
  assert.throws(() => ev('1 +'), code('HCL_SYNTAX'));
  assert.throws(() => ev('[1, 2'), /expected "," or "\]"/);
  assert.throws(() => ev(`${'['.repeat(500)}1${']'.repeat(500)}`), code('HCL_LIMIT'));
  assert.throws(() => ev(`${'('.repeat(500)}1${')'.repeat(500)}`), code('HCL_LIMIT'));
  assert.throws(() => ev(`${'-'.repeat(500)}1`), code('HCL_LIMIT'));
});
