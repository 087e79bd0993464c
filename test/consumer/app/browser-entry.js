// (c) What a browser app bundles: the machine and the testing kit.
export * from 'steward/machine';
export { ScriptedModel, scriptedCall } from 'steward/testing';
