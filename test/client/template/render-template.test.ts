import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate, renderTemplateResult, splitVarPath, TemplateRenderError, type NomadServiceSource, type NomadVarSource } from '../../../src/client/template/render-template.js';
import type { ServiceRegistration } from '../../../src/structs/service-registration.js';
import type { Variable } from '../../../src/structs/variable.js';
import { EnvFileParseError, parseEnvFile } from '../../../src/client/template/parse-env-file.js';

const env = { NOMAD_ALLOC_ID: 'abc-123', NAME: 'World' };
const r = (src: string, l?: string, rd?: string): string => renderTemplate(src, { env, leftDelim: l, rightDelim: rd });

describe('renderTemplate', () => {
  it('passes literal text through and renders env lookups', () => {
    assert.equal(r('plain text\n'), 'plain text\n');
    assert.equal(r('id={{ env "NOMAD_ALLOC_ID" }};'), 'id=abc-123;');
    assert.equal(r('{{env "MISSING"}}|'), '|');
    assert.equal(r('{{ env `NAME` }}'), 'World');
  });

  it('supports pipelines of pure functions, literals and comments', () => {
    assert.equal(r('{{ env "NAME" | toUpper }}'), 'WORLD');
    assert.equal(r('{{ "  x " | trimSpace | toUpper }}'), 'X');
    assert.equal(r('{{ "a}}b" }}'), 'a}}b');
    assert.equal(r('a{{/* note */}}b'), 'ab');
  });

  it('honours trim markers', () => {
    assert.equal(r('a  \n  {{- env "NAME" -}}  \n  b'), 'aWorldb');
    assert.equal(r('a {{- "x" }} b'), 'ax b');
    assert.equal(r('{{ -1 }}'), '-1');
  });

  it('uses custom delimiters and leaves the default ones alone', () => {
    assert.equal(r('[[ env "NAME" ]] {{ not a template }}', '[[', ']]'), 'World {{ not a template }}');
  });

  it('rejects unsupported functions and actions by name', () => {
    assert.throws(() => r('{{ key "config/x" }}'), { name: 'TemplateRenderError', message: 'unsupported function "key"' });
    assert.throws(() => r('{{ with secret "kv/x" }}{{ end }}'), /unsupported function "secret"/);
    assert.throws(() => r('{{ range service "db" }}{{ end }}'), /unsupported function "service"/);
    assert.throws(() => r('{{ nomadVar "x" }}'), /nomadVar: Nomad variables are not available/);
    assert.throws(() => r('{{ env "A" | key }}'), /unsupported function "key"/);
    assert.throws(() => r('{{ define "x" }}{{ end }}'), /unsupported action "define"/);
    assert.throws(() => r('{{ if true }}x'), /missing \{\{end\}\}/);
    assert.throws(() => r('{{ end }}'), /unexpected \{\{end\}\}/);
  });

  it('runs Go control structures, variables and builtins', () => {
    assert.equal(r('{{ $x := "a" }}{{ $x }}{{ $x = "b" }}{{ $x }}'), 'ab');
    assert.equal(r('{{ if eq (env "NAME") "World" }}yes{{ else }}no{{ end }}'), 'yes');
    assert.equal(r('{{ if eq 1 2 }}a{{ else if eq 2 2 }}b{{ else }}c{{ end }}'), 'b');
    assert.equal(r('{{ with env "MISSING" }}set{{ else }}unset{{ end }}'), 'unset');
    assert.equal(r('{{ with env "NAME" }}<{{ . }}>{{ end }}'), '<World>');
    assert.equal(r('{{ range $i, $v := split "," "a,b,c" }}{{ $i }}={{ $v }};{{ end }}'), '0=a;1=b;2=c;');
    assert.equal(r('{{ range split "," "" }}x{{ else }}none{{ end }}'), 'x');
    assert.equal(r('{{ printf "%s-%d" "n" 3 }} {{ len "abc" }} {{ and 1 0 }} {{ or 0 "z" }} {{ not false }}'), 'n-3 3 0 z true');
    assert.equal(r('{{ "a" | printf "%s!" }}'), 'a!');
  });
  it('rejects malformed templates', () => {
    assert.throws(() => r('{{ env "NAME" '), /unclosed action/);
    assert.throws(() => r('{{ env "NAME }}'), /unterminated quoted string/);
    assert.throws(() => r('{{ env }}'), /wrong number of args for env/);
    assert.throws(() => r('{{ }}'), /missing value/);
  });
});

describe('renderTemplateResult with Nomad variables', () => {
  const v = (path: string, items: Record<string, string>, namespace = 'default'): Variable => ({ Namespace: namespace, Path: path, Items: items, CreateIndex: 5, CreateTime: 1, ModifyIndex: 7, ModifyTime: 2 });
  const vars = new Map<string, Variable | null>([
    ['default/nomad/jobs/web', v('nomad/jobs/web', { user: 'admin', pass: 's3cret' })],
    ['prod/nomad/jobs/web', v('nomad/jobs/web', { user: 'prod-admin' }, 'prod')],
    ['default/nomad/jobs/none', null],
  ]);
  const source: NomadVarSource = {
    get: (ns, path) => {
      if (path === 'nomad/jobs/denied') throw new TemplateRenderError('nomad.var.get(nomad/jobs/denied@default.global): Permission denied');
      return vars.get(`${ns || 'default'}/${path}`);
    },
    list: (ns, prefix) => (prefix === 'unfetched' ? undefined : [...vars.values()].filter((x): x is Variable => x !== null && x.Namespace === (ns || 'default') && x.Path.startsWith(prefix))),
  };
  const rv = (src: string, errMissingKey = false) => renderTemplateResult(src, { env, nomad: source, namespace: 'default', region: 'global', errMissingKey });

  it('reads items with nomadVar, in another namespace with path@namespace', () => {
    assert.deepEqual(rv('{{ with nomadVar "nomad/jobs/web" }}{{ .user }}:{{ .pass }}{{ end }}'), { text: 'admin:s3cret', blocked: [] });
    assert.equal(rv('{{ with nomadVar "nomad/jobs/web@prod.global" }}{{ .user }}{{ end }}').text, 'prod-admin');
    assert.equal(rv('{{ range $k, $v := nomadVar "nomad/jobs/web" }}{{ $k }}={{ $v }};{{ end }}').text, 'pass=s3cret;user=admin;');
    assert.equal(rv('{{ (nomadVar "nomad/jobs/web").Keys }} {{ (nomadVar "nomad/jobs/web").Parent.Path }}').text, '[pass user] nomad/jobs/web');
    assert.equal(rv('{{ with nomadVar "nomad/jobs/web" }}{{ .nope }}{{ end }}').text, '<no value>');
    assert.throws(() => rv('{{ with nomadVar "nomad/jobs/web" }}{{ .nope }}{{ end }}', true), /map has no entry for key "nope"/);
  });

  it('blocks nomadVar on a missing variable; nomadVarExists and nomadVarList never block', () => {
    assert.deepEqual(rv('a{{ with nomadVar "nomad/jobs/none" }}{{ .x }}{{ end }}b'), { text: 'ab', blocked: ['nomad.var.block(nomad/jobs/none@default.global)'] });
    assert.deepEqual(rv('{{ nomadVarExists "nomad/jobs/none" }} {{ nomadVarExists "nomad/jobs/web" }}'), { text: 'false true', blocked: [] });
    assert.deepEqual(rv('{{ range nomadVarList "nomad/jobs/w" }}{{ .Path }}@{{ .Namespace }};{{ end }}'), { text: 'nomad/jobs/web@default;', blocked: [] });
    assert.deepEqual(rv('{{ range nomadVarList "zzz" }}x{{ end }}'), { text: '', blocked: [] });
    assert.deepEqual(rv('{{ range nomadVarListSafe "zzz" }}x{{ end }}').blocked, ['nomad.var.list(zzz@default.global)']);
    assert.deepEqual(rv('{{ range nomadVarListSafe "nomad" }}{{ .Path }}{{ end }}'), { text: 'nomad/jobs/web', blocked: [] });
    assert.deepEqual(rv('{{ nomadVarList "unfetched" }}').blocked, ['nomad.var.list(unfetched@default.global)']);
    assert.deepEqual(rv('{{ with nomadVar "" }}x{{ end }}{{ nomadVarExists "" }}'), { text: 'false', blocked: [] });
    assert.throws(() => rv('{{ nomadVarList "a" "b" }}'), /wrong number of args for nomadVarList/);
  });

  it('fails the render on a refused read', () => {
    assert.throws(() => rv('{{ with nomadVar "nomad/jobs/denied" }}{{ end }}'), /Permission denied/);
  });

  it('splits path@namespace.region', () => {
    assert.deepEqual(splitVarPath('a/b'), { path: 'a/b', namespace: '' });
    assert.deepEqual(splitVarPath('a/b@prod'), { path: 'a/b', namespace: 'prod' });
    assert.deepEqual(splitVarPath('a/b@prod.eu'), { path: 'a/b', namespace: 'prod' });
  });
});

describe('parseEnvFile', () => {
  it('reads KEY=value lines, quotes, export and comments', () => {
    assert.deepEqual(parseEnvFile('# c\nA=1\n\nexport B = two words # tail\nC="q \\"x\\"\\n"\nD=\'raw #\'\nE=\n'), {
      A: '1',
      B: 'two words',
      C: 'q "x"\n',
      D: 'raw #',
      E: '',
    });
  });

  it('names the bad line', () => {
    assert.throws(() => parseEnvFile('A=1\nnot a pair'), (e: unknown) => e instanceof EnvFileParseError && e.line === 2);
    assert.throws(() => parseEnvFile('1BAD=x'), /invalid variable name/);
  });
});

test('nomadService and nomadServices: every form Nomad documents, blocked until fetched', () => {
  const reg = (i: number, tags: string[]): ServiceRegistration => ({
    ID: `id-${i}`, ServiceName: 'web', Namespace: 'default', NodeID: `node-${i}`, Datacenter: 'dc1', JobID: 'j', AllocID: `a-${i}`, Tags: tags, Address: `10.0.0.${i}`, Port: 8000 + i, CreateIndex: 1, ModifyIndex: 1,
  });
  const all = [reg(1, ['v1']), reg(2, ['v2']), reg(3, ['v1'])];
  const asked: string[] = [];
  const services: NomadServiceSource = {
    service(namespace, name, tag, choose) {
      asked.push(`${namespace}|${name}|${tag}|${choose}`);
      if (name === 'later') return undefined;
      const regs = all.filter((r) => !tag || r.Tags?.includes(tag));
      return choose ? regs.slice(0, Number(choose.split('|')[0])) : regs;
    },
    services: () => [{ Namespace: 'default', Services: [{ ServiceName: 'web', Tags: ['v1', 'v2'] }] }],
  };
  const render = (src: string) => renderTemplateResult(src, { env: {}, services, namespace: 'default', region: 'global' });
  assert.equal(render('{{ range nomadService "web" }}{{ .Address }}:{{ .Port }} {{ end }}').text, '10.0.0.1:8001 10.0.0.2:8002 10.0.0.3:8003 ');
  assert.equal(render('{{ range nomadService "v1.web" }}{{ .Name }}@{{ .Address }} {{ end }}').text, 'web@10.0.0.1 web@10.0.0.3 ');
  assert.equal(render('{{ range nomadService 1 "k" "web@other" }}{{ .AllocID }}{{ end }}').text, 'a-1');
  assert.deepEqual(asked.slice(-1), ['other|web||1|k']);
  assert.equal(render('{{ range nomadServices }}{{ .Name }}={{ join "," .Tags }}{{ end }}').text, 'web=v1,v2');
  assert.deepEqual(render('{{ range nomadService "later" }}x{{ end }}').blocked, ['nomad.service(later)']);
  assert.throws(() => render('{{ nomadService "a/../b c" }}'), /invalid service query/);
  assert.throws(() => render('{{ nomadService 0 "k" "web" }}'), /positive integer/);
  assert.throws(() => renderTemplateResult('{{ nomadService "web" }}', { env: {} }), /not available/);
});
