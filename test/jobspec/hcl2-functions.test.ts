import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ev } from './hcl2-eval-helper.js';

test('string functions', () => {
  assert.equal(ev('upper("abc")'), 'ABC');
  assert.equal(ev('lower("ABC")'), 'abc');
  assert.equal(ev('title("hello world")'), 'Hello World');
  assert.equal(ev('chomp("x\\n\\r\\n")'), 'x');
  assert.equal(ev('trimspace("  x \\n")'), 'x');
  assert.equal(ev('trim("?!hello?!", "!?")'), 'hello');
  assert.equal(ev('trimprefix("helloworld", "hello")'), 'world');
  assert.equal(ev('trimsuffix("helloworld", "world")'), 'hello');
  assert.deepEqual(ev('split(",", "a,b,c")'), ['a', 'b', 'c']);
  assert.equal(ev('join("-", ["a", "b"], ["c"])'), 'a-b-c');
  assert.equal(ev('replace("1 + 2 + 3", "+", "-")'), '1 - 2 - 3');
  assert.equal(ev('replace("hello world", "/w(or)ld/", "$1")'), 'hello or');
  assert.equal(ev('regex_replace("a1b22", "[0-9]+", "#")'), 'a#b#');
  assert.equal(ev('regex_replace("k=v", "(?P<k>\\\\w)=(?P<v>\\\\w)", "${v}=${k}")'), 'v=k');
  assert.equal(ev('substr("hello world", 1, 4)'), 'ello');
  assert.equal(ev('substr("hello", -3, -1)'), 'llo');
  assert.equal(ev('strlen("héllo")'), 5);
  assert.equal(ev('strrev("abc")'), 'cba');
  assert.equal(ev('reverse("abc")'), 'cba');
  assert.equal(ev('indent(2, "a\\nb")'), 'a\n  b');
});

test('format and formatlist use Go verbs', () => {
  assert.equal(ev('format("Hello, %s!", "Ander")'), 'Hello, Ander!');
  assert.equal(ev('format("There are %d lights", 4)'), 'There are 4 lights');
  assert.equal(ev('format("%05.2f|%-4d|%4s|%x|%q|%t|%%", 3.14159, 7, "ab", 255, "q", true)'), '03.14|7   |  ab|ff|"q"|true|%');
  assert.equal(ev('format("%[2]s %[1]s", "a", "b")'), 'b a');
  assert.equal(ev('format("%v", [1, "a"])'), '[1,"a"]');
  assert.deepEqual(ev('formatlist("%s=%d", ["a", "b"], [1, 2])'), ['a=1', 'b=2']);
  assert.deepEqual(ev('formatlist("Hello, %s!", "x")'), ['Hello, x!']);
  assert.throws(() => ev('format("%d", "x")'), /must be a number/);
  assert.throws(() => ev('format("%s %s", "a")'), /not enough arguments/);
  assert.throws(() => ev('format("%999999999d", 1)'), /width or precision/);
});

test('collection functions', () => {
  assert.deepEqual(ev('concat([1], [2, 3])'), [1, 2, 3]);
  assert.deepEqual(ev('flatten([[1, [2]], 3])'), [1, 2, 3]);
  assert.deepEqual(ev('distinct(["a", "b", "a"])'), ['a', 'b']);
  assert.deepEqual(ev('compact(["a", "", null, "b"])'), ['a', 'b']);
  assert.deepEqual(ev('chunklist([1, 2, 3], 2)'), [[1, 2], [3]]);
  assert.equal(ev('contains(["a"], "a")'), true);
  assert.equal(ev('element(["a", "b"], 3)'), 'b');
  assert.equal(ev('index(["a", "b"], "b")'), 1);
  assert.deepEqual(ev('keys({b = 1, a = 2})'), ['a', 'b']);
  assert.deepEqual(ev('values({b = 1, a = 2})'), [2, 1]);
  assert.equal(ev('length({a = 1})'), 1);
  assert.equal(ev('length("abc")'), 3);
  assert.equal(ev('lookup({a = 1}, "a")'), 1);
  assert.equal(ev('lookup({a = 1}, "b", "dflt")'), 'dflt');
  assert.throws(() => ev('lookup({a = 1}, "b")'), /does not exist/);
  assert.deepEqual(ev('merge({a = 1, b = 1}, {b = 2}, null)'), { a: 1, b: 2 });
  assert.deepEqual(ev('range(3)'), [0, 1, 2]);
  assert.deepEqual(ev('range(1, 4)'), [1, 2, 3]);
  assert.deepEqual(ev('range(4, 1)'), [4, 3, 2]);
  assert.deepEqual(ev('range(0, 1, 0.25)'), [0, 0.25, 0.5, 0.75]);
  assert.throws(() => ev('range(1025)'), /more than 1024 values/);
  assert.deepEqual(ev('reverse([1, 2])'), [2, 1]);
  assert.deepEqual(ev('setunion(["a"], ["b", "a"])'), ['a', 'b']);
  assert.deepEqual(ev('setintersection(["a", "b"], ["b", "c"])'), ['b']);
  assert.deepEqual(ev('setproduct(["a", "b"], [1])'), [['a', 1], ['b', 1]]);
  assert.deepEqual(ev('slice(["a", "b", "c"], 1, 3)'), ['b', 'c']);
  assert.deepEqual(ev('sort(["b", "a", "c"])'), ['a', 'b', 'c']);
  assert.deepEqual(ev('zipmap(["a", "b"], [1, 2])'), { a: 1, b: 2 });
  assert.equal(ev('coalesce(null, "x")'), 'x');
  assert.deepEqual(ev('coalescelist([], ["y"])'), ['y']);
});

test('numeric functions', () => {
  assert.equal(ev('abs(-3)'), 3);
  assert.equal(ev('ceil(1.2)'), 2);
  assert.equal(ev('floor(1.8)'), 1);
  assert.equal(ev('log(8, 2)'), 3);
  assert.equal(ev('max(1, 5, 3)'), 5);
  assert.equal(ev('min(1, 5, 3)'), 1);
  assert.equal(ev('parseint("ff", 16)'), 255);
  assert.equal(ev('parseint("-101", 2)'), -5);
  assert.throws(() => ev('parseint("12", 1)'), /base must be/);
  assert.equal(ev('pow(2, 10)'), 1024);
  assert.equal(ev('signum(-7)'), -1);
});

test('encoding functions', () => {
  assert.equal(ev('base64encode("Hello World")'), 'SGVsbG8gV29ybGQ=');
  assert.equal(ev('base64decode("SGVsbG8gV29ybGQ=")'), 'Hello World');
  assert.throws(() => ev('base64decode("!!")'), /not valid base64/);
  assert.equal(ev('jsonencode({b = [1, true], a = "<x>"})'), '{"a":"\\u003cx\\u003e","b":[1,true]}');
  assert.deepEqual(ev('jsondecode("{\\"a\\": [1, null]}")'), { a: [1, null] });
  assert.equal(ev('urlencode("a b&c/é")'), 'a+b%26c%2F%C3%A9');
  assert.deepEqual(ev('csvdecode("a,b\\n1,\\"x,y\\"\\n")'), [{ a: '1', b: 'x,y' }]);
  assert.equal(ev('yamlencode({a = "b", c = [1, {d = true}], e = {}})'), '"a": "b"\n"c":\n- 1\n- "d": true\n"e": {}\n');
  assert.deepEqual(
    ev('yamldecode("# c\\na: 1\\nb:\\n  - x\\n  - \'y z\'\\n  - k: v\\n    n: null\\nc: {p: [1, 2]}\\nd: |\\n  line1\\n  line2\\ne: true\\n")'),
    { a: 1, b: ['x', 'y z', { k: 'v', n: null }], c: { p: [1, 2] }, d: 'line1\nline2\n', e: true },
  );
  assert.throws(() => ev('yamldecode("a: &x 1")'), /anchors/);
});

test('hash, uuid and crypto functions', () => {
  assert.equal(ev('md5("hello world")'), '5eb63bbbe01eeed093cb22bb8f5acdc3');
  assert.equal(ev('sha1("hello world")'), '2aae6c35c94fcfb415dbe95f408b9ce91ee846ed');
  assert.equal(ev('sha256("hello world")'), 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9');
  assert.equal((ev('sha512("")') as string).length, 128);
  assert.match(ev('uuidv4()') as string, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(ev('uuidv5("dns", "www.terraform.io")'), 'a5008fae-b28c-5ba5-96cd-82b4c53552d6');
  assert.equal(ev('uuidv5("url", "https://www.terraform.io/")'), '9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5');
  assert.throws(() => ev('bcrypt("x")'), /not supported by Caravan/);
});

test('cidr functions', () => {
  assert.equal(ev('cidrhost("10.12.112.0/20", 16)'), '10.12.112.16');
  assert.equal(ev('cidrhost("10.12.112.0/20", 268)'), '10.12.113.12');
  assert.equal(ev('cidrhost("fd00:fd12:3456:7890:00a2::/72", 34)'), 'fd00:fd12:3456:7890::22');
  assert.equal(ev('cidrnetmask("172.16.0.0/12")'), '255.240.0.0');
  assert.equal(ev('cidrsubnet("172.16.0.0/12", 4, 2)'), '172.18.0.0/16');
  assert.equal(ev('cidrsubnet("10.1.2.0/24", 4, 15)'), '10.1.2.240/28');
  assert.equal(ev('cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162)'), 'fd00:fd12:3456:7800:a200::/72');
  assert.deepEqual(ev('cidrsubnets("10.1.0.0/16", 4, 4, 8, 4)'), ['10.1.0.0/20', '10.1.16.0/20', '10.1.32.0/24', '10.1.48.0/20']);
  assert.throws(() => ev('cidrsubnet("10.0.0.0/30", 4, 1)'), /insufficient address space/);
});

test('time functions', () => {
  assert.equal(ev('timeadd("2017-11-22T00:00:00Z", "10m")'), '2017-11-22T00:10:00Z');
  assert.equal(ev('timeadd("2017-11-22T00:00:00+02:00", "-1h30m")'), '2017-11-21T22:30:00+02:00');
  assert.equal(ev('formatdate("DD MMM YYYY hh:mm ZZZ", "2018-01-02T23:12:01Z")'), '02 Jan 2018 23:12 UTC');
  assert.equal(ev('formatdate("EEEE, DD-MMM-YY hh:mm:ss ZZZ", "2018-01-02T23:12:01-08:00")'), 'Tuesday, 02-Jan-18 23:12:01 -0800');
  assert.equal(ev('formatdate("h:mm", "2018-01-01T15:05:00Z")'), '15:05');
  assert.equal(ev("formatdate(\"H:mmaa 'o''clock'\", \"2018-01-01T15:05:00Z\")"), "3:05pm o'clock");
  assert.throws(() => ev('timeadd("yesterday", "1h")'), /RFC3339/);
});

test('filesystem functions read relative to the job file directory when enabled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hcl2-files-'));
  mkdirSync(join(dir, 'conf', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'conf', 'a.txt'), 'alpha');
  writeFileSync(join(dir, 'conf', 'sub', 'b.txt'), 'beta');
  writeFileSync(join(dir, 'conf', 'c.yml'), 'x: 1');
  const opts = { baseDir: dir };
  assert.equal(ev('file("conf/a.txt")', opts), 'alpha');
  assert.equal(ev('filebase64("conf/a.txt")', opts), 'YWxwaGE=');
  assert.equal(ev('fileexists("conf/a.txt")', opts), true);
  assert.equal(ev('fileexists("conf/none")', opts), false);
  assert.deepEqual(ev('fileset("conf", "*.txt")', opts), ['a.txt']);
  assert.deepEqual(ev('fileset("conf", "**/*.txt")', opts), ['a.txt', 'sub/b.txt']);
  assert.deepEqual(ev('fileset("conf", "*.{txt,yml}")', opts), ['a.txt', 'c.yml']);
  assert.deepEqual(ev('yamldecode(file("conf/c.yml"))', opts), { x: 1 });
  assert.equal(ev('basename("a/b/c.txt")', opts), 'c.txt');
  assert.equal(ev('dirname("a/b/c.txt")', opts), 'a/b');
  assert.throws(() => ev('file("conf/missing")', opts), /failed to read file/);
  // Off unless the caller enables them (the server never does).
  assert.throws(() => ev('file("conf/a.txt")'), /filesystem function file\(\) is disabled/);
  assert.equal(ev('can(file("conf/a.txt"))'), false);
});
