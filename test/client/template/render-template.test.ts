import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate, TemplateRenderError } from '../../../src/client/template/render-template.js';
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

  it('rejects unsupported functions, fields and actions by name', () => {
    assert.throws(() => r('{{ key "config/x" }}'), { name: 'TemplateRenderError', message: 'unsupported function "key"' });
    assert.throws(() => r('{{ with secret "kv/x" }}{{ end }}'), /unsupported action "with"/);
    assert.throws(() => r('{{ range service "db" }}{{ end }}'), /unsupported action "range"/);
    assert.throws(() => r('{{ nomadVar "x" }}'), /unsupported function "nomadVar"/);
    assert.throws(() => r('{{ .Name }}'), /unsupported field reference "\.Name"/);
    assert.throws(() => r('{{ env "A" | key }}'), /unsupported function "key"/);
    assert.throws(() => r('{{ $x := 1 }}'), TemplateRenderError);
  });

  it('rejects malformed templates', () => {
    assert.throws(() => r('{{ env "NAME" '), /unclosed action/);
    assert.throws(() => r('{{ env "NAME }}'), /unterminated quoted string/);
    assert.throws(() => r('{{ env }}'), /wrong number of args for env/);
    assert.throws(() => r('{{ }}'), /missing value/);
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
