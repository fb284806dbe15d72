/**
 * The functions a job file's expressions may call: the list of Nomad's
 * `jobspec2/functions.go` (try, can and convert are built into the evaluator).
 */
import type { FunctionTable, HclFunction } from './expression-evaluator.js';
import { CIDR_FUNCTIONS } from './functions/cidr-functions.js';
import { COLLECTION_FUNCTIONS } from './functions/collection-functions.js';
import { CRYPTO_FUNCTIONS } from './functions/crypto-functions.js';
import { ENCODING_FUNCTIONS } from './functions/encoding-functions.js';
import { fileFunctions, type FileAccess } from './functions/file-functions.js';
import { NUMERIC_FUNCTIONS } from './functions/numeric-functions.js';
import { STRING_FUNCTIONS } from './functions/string-functions.js';
import { TIME_FUNCTIONS } from './functions/time-functions.js';

/** Names the evaluator implements itself (they see their arguments unevaluated). */
export const BUILTIN_FUNCTION_NAMES = ['try', 'can', 'convert'] as const;

/** Every function, with filesystem functions enabled or disabled by `files`. */
export function jobspecFunctions(files: FileAccess): FunctionTable {
  const all: Record<string, HclFunction> = {
    ...STRING_FUNCTIONS,
    ...COLLECTION_FUNCTIONS,
    ...NUMERIC_FUNCTIONS,
    ...ENCODING_FUNCTIONS,
    ...CRYPTO_FUNCTIONS,
    ...CIDR_FUNCTIONS,
    ...TIME_FUNCTIONS,
    ...fileFunctions(files),
  };
  return new Map(Object.entries(all));
}
