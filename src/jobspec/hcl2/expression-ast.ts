/**
 * The syntax tree of an HCL2 expression or template, as the parser builds it and the
 * evaluator walks it. Values are plain JSON-like data (see HclValue).
 */

/** A value in an HCL2 evaluation: cty's types folded onto JSON (lists/sets/tuples are arrays). */
export type HclValue = string | number | boolean | null | HclValue[] | { [key: string]: HclValue };

/** One step after a root name: `.attr`, `[index]`, or a splat that maps the rest over a list. */
export type Traverser =
  | { kind: 'attr'; name: string }
  | { kind: 'index'; key: Expr };

/** A part of a template: literal text, an interpolation, or a directive. */
export type TemplatePart =
  | { kind: 'text'; text: string }
  | { kind: 'interp'; expr: Expr }
  | { kind: 'if'; cond: Expr; then: TemplatePart[]; else: TemplatePart[] }
  | { kind: 'for'; keyVar: string | undefined; valueVar: string; coll: Expr; body: TemplatePart[] };

/** An expression node. */
export type Expr =
  | { kind: 'literal'; value: HclValue }
  | { kind: 'template'; parts: TemplatePart[] }
  /** A name and its static steps, e.g. `var.x["a"]`; `source` is the text, for unknown names. */
  | { kind: 'traversal'; root: string; steps: Traverser[]; source: string }
  | { kind: 'getattr'; target: Expr; name: string }
  | { kind: 'index'; target: Expr; key: Expr }
  /** `target[*].a.b` or `target.*.a`: `each` is applied to every element. */
  | { kind: 'splat'; target: Expr; each: Expr }
  /** The element a splat's `each` starts from. */
  | { kind: 'splat-item' }
  | { kind: 'call'; name: string; args: Expr[]; expandFinal: boolean }
  | { kind: 'unary'; op: '!' | '-'; operand: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'conditional'; cond: Expr; then: Expr; else: Expr }
  | { kind: 'tuple'; items: Expr[] }
  | { kind: 'object'; items: { key: Expr; value: Expr }[] }
  | {
      kind: 'for';
      keyVar: string | undefined;
      valueVar: string;
      coll: Expr;
      keyExpr: Expr | undefined;
      valueExpr: Expr;
      cond: Expr | undefined;
      group: boolean;
    };

/** Binary operators, by HCL2's precedence groups. */
export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%';
