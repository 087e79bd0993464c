/**
 * A call's arguments checked against the tool's input schema with the SDK's JSON Schema
 * validator (ajv, as the SDK configures it: the schema's own dialect, formats checked, every
 * error reported). A model that sent bad arguments reads what is wrong and tries again; the
 * server is not called.
 */
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import type { ToolDefinition } from './types.js';

/**
 * A validator of arguments: null when they match the tool's input schema, else a message a
 * model or a person can act on. Compiled schemas are kept by digest (one per tool version).
 *
 * @example
 * const validate = createArgumentValidator();
 * validate(definition, { text: '' }); // 'The arguments of files.echo do not match its input schema: arguments/text must NOT have fewer than 1 characters.'
 */
export function createArgumentValidator(): (definition: ToolDefinition, args: unknown) => string | null {
  const provider = new AjvJsonSchemaValidator();
  const compiled = new Map<string, JsonSchemaValidator<unknown> | string>();
  const compile = (definition: ToolDefinition): JsonSchemaValidator<unknown> | string => {
    // ajv keeps schemas by $id: two servers' schemas with one $id would share a validator.
    const { $id: _id, ...schema } = definition.inputSchema;
    try {
      return provider.getValidator(schema as JsonSchemaType);
    } catch (error) {
      return `The input schema of ${definition.server}.${definition.name} cannot be checked (${error instanceof Error ? error.message : String(error)}): the tool cannot be called. Report it to the server's author.`;
    }
  };
  return (definition, args) => {
    let validator = compiled.get(definition.digest);
    if (validator === undefined) compiled.set(definition.digest, (validator = compile(definition)));
    if (typeof validator === 'string') return validator;
    const result = validator(args);
    if (result.valid) return null;
    const errors = result.errorMessage.replace(/(^|, )data(?=[/ ])/g, '$1arguments');
    return `The arguments of ${definition.server}.${definition.name} do not match its input schema: ${errors}. Fix them and call the tool again.`;
  };
}
