/**
 * Values checked against a server's JSON Schema with the SDK's validator (ajv, as the SDK
 * configures it: the schema's own dialect, formats checked, every error reported): a call's
 * arguments against the tool's input schema (a model that sent bad ones reads what is wrong and
 * tries again; the server is not called), and a person's answer against the form a server asked
 * for (elicitation).
 */
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import type { ToolDefinition } from './types.js';

/** What is wrong with a value (`errors`, ajv's, the value named `data`), or that the schema itself cannot be checked. */
export type SchemaProblem = { errors: string } | { uncheckable: string };

/**
 * A checker of values against schemas: null when `value` matches. Compiled schemas are kept by
 * `key` (a digest: one per tool version, or per form a server asked for).
 *
 * @example
 * const check = createSchemaChecker();
 * check(digest, { type: 'object', required: ['ok'] }, {}); // { errors: "data must have required property 'ok'" }
 */
export function createSchemaChecker(): (key: string, schema: Record<string, unknown>, value: unknown) => SchemaProblem | null {
  const provider = new AjvJsonSchemaValidator();
  const compiled = new Map<string, JsonSchemaValidator<unknown> | { uncheckable: string }>();
  const compile = (schema: Record<string, unknown>): JsonSchemaValidator<unknown> | { uncheckable: string } => {
    // ajv keeps schemas by $id: two servers' schemas with one $id would share a validator.
    const { $id: _id, ...rest } = schema;
    try {
      return provider.getValidator(rest as JsonSchemaType);
    } catch (error) {
      return { uncheckable: error instanceof Error ? error.message : String(error) };
    }
  };
  return (key, schema, value) => {
    let validator = compiled.get(key);
    if (validator === undefined) compiled.set(key, (validator = compile(schema)));
    if (typeof validator !== 'function') return validator;
    const result = validator(value);
    return result.valid ? null : { errors: result.errorMessage };
  };
}

/**
 * A validator of arguments: null when they match the tool's input schema, else a message a
 * model or a person can act on.
 *
 * @example
 * const validate = createArgumentValidator();
 * validate(definition, { text: '' }); // 'The arguments of files.echo do not match its input schema: arguments/text must NOT have fewer than 1 characters.'
 */
export function createArgumentValidator(): (definition: ToolDefinition, args: unknown) => string | null {
  const check = createSchemaChecker();
  return (definition, args) => {
    const problem = check(definition.digest, definition.inputSchema, args);
    if (problem === null) return null;
    if ('uncheckable' in problem)
      return `The input schema of ${definition.server}.${definition.name} cannot be checked (${problem.uncheckable}): the tool cannot be called. Report it to the server's author.`;
    const errors = problem.errors.replace(/(^|, )data(?=[/ ])/g, '$1arguments');
    return `The arguments of ${definition.server}.${definition.name} do not match its input schema: ${errors}. Fix them and call the tool again.`;
  };
}
