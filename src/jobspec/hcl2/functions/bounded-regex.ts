/**
 * Regular expressions for `replace(s, "/re/", …)` and `regex_replace`. Go's RE2 never
 * backtracks; JavaScript's engine can take exponential time on patterns such as `(a+)+$`.
 * So every match runs in a separate V8 context with a timeout, and one evaluation may spend
 * only its budget's maxRegexMs on regexes in all: a hostile pattern fails with a Limit error
 * instead of holding the server. RE2's syntax is translated where JavaScript's differs.
 */
import vm from 'node:vm';
import { performance } from 'node:perf_hooks';
import type { EvalBudget } from '../eval-budget.js';
import { evalError, HclEvalError, HclEvalErrorCode } from '../hcl-eval-error.js';

const context = vm.createContext({});
const replaceScript = new vm.Script('__s.replace(new RegExp(__p, __f), __r)');

/** A compiled, bounded regex. */
export interface BoundedRegex {
  /** Replaces every match (JavaScript replacement syntax: `$1`, `$<name>`). */
  replaceAll(input: string, replacement: string, budget: EvalBudget): string;
}

/** Translates RE2 syntax to JavaScript's: `(?P<n>`, leading `(?i)` flags, `\A`, `\z`. */
function translate(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = 'g';
  const lead = /^\(\?([imsU]+)\)/.exec(source);
  if (lead) {
    for (const f of lead[1]!) if (f !== 'U' && !flags.includes(f)) flags += f;
    source = source.slice(lead[0].length);
  }
  if (/\\[1-9]|\(\?<?[=!]/.test(source)) {
    throw evalError(`invalid regex ${JSON.stringify(pattern)}: backreferences and lookaround are not RE2 syntax`);
  }
  source = source.replace(/\(\?P</g, '(?<').replace(/\\A/g, '^').replace(/\\z/g, '$(?![\\s\\S])');
  return { source, flags };
}

/** Compiles `pattern` (RE2 syntax); an invalid pattern is a recoverable error naming it. */
export function boundedRegex(pattern: string): BoundedRegex {
  const { source, flags } = translate(pattern);
  let useFlags = `${flags}u`;
  try {
    new RegExp(source, useFlags);
  } catch {
    useFlags = flags;
    try {
      new RegExp(source, useFlags);
    } catch (err) {
      throw evalError(`invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
  }
  return {
    replaceAll(input: string, replacement: string, budget: EvalBudget): string {
      const left = budget.regexTimeLeft();
      if (left <= 0) throw limit(pattern, budget);
      Object.assign(context, { __s: input, __p: source, __f: useFlags, __r: replacement });
      const start = performance.now();
      try {
        return String(replaceScript.runInContext(context, { timeout: Math.max(1, Math.ceil(left)) }));
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw limit(pattern, budget);
        throw evalError(`regex ${JSON.stringify(pattern)} failed: ${(err as Error).message}`);
      } finally {
        budget.spendRegexTime(performance.now() - start);
        Object.assign(context, { __s: '', __r: '' });
      }
    },
  };
}

function limit(pattern: string, budget: EvalBudget): HclEvalError {
  return new HclEvalError(
    HclEvalErrorCode.Limit,
    `regex ${JSON.stringify(pattern)} ran out of the ${budget.limits.maxRegexMs}ms regex time budget (it backtracks; RE2 would not)`,
  );
}
