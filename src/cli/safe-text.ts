/** The terminal-safe text functions, kept at their old path for the CLI's modules. */
export * from '../text/safe-text.js';
