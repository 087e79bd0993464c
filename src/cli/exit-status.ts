/**
 * The exit code a command chose (`steward run` ends with the autopilot's or the prompts'), kept
 * for one `main()` call: `main` resolves with it, instead of the command setting `process.exitCode`.
 */
export interface ExitStatus {
  exitCode: number;
}
