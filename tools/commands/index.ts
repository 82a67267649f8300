/**
 * The table of `rvm` commands. Each entry carries its help and argv shape and loads its
 * implementation only when run, so `rvm help` and `rvm --version` never load the runtime.
 */
import type { CliIo, CommandSpec, ParsedArgs } from './common.js';
import { helpCommand } from './help.js';

/** Every command, in the order help lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'new',
    args: 'DIR',
    minArgs: 1,
    maxArgs: 1,
    summary: 'create a working app in a new or empty folder',
    description:
      'Writes a route file (GET and a validated POST /hello), _middleware.rvm, rvm.config.json (name from the folder, version 0.1.0),\n' +
      "a .gitignore, a README and test/app.test.mjs (run it with 'node --test' in DIR). 'rvm run DIR' serves the app at once.\n" +
      'A folder that exists and is not empty is refused (exit 1) and nothing in it is touched.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./new.js')).newCommand(args, io),
  },
  {
    name: 'run',
    args: '[DIR|BUNDLE]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'serve an app folder (default: .) or a .rvmb bundle',
    description:
      'Compiles the app (through app/.rvm/cache), serves it and prints the app URL and the API reference URL.\n' +
      'Dev mode, the default, watches the folder and reloads changed files before the next request.\n' +
      'PORT and HOST from the environment override the defaults; flags override both.',
    flags: [
      { name: 'port', value: 'PORT', doc: 'port to listen on (default 3000; 0 picks a free one)' },
      { name: 'host', value: 'HOST', doc: 'address to listen on (default 127.0.0.1)' },
      { name: 'prod', doc: 'production mode: no watching, no error details in responses' },
      { name: 'workers', value: 'N', doc: 'run N worker processes (node:cluster)' },
    ],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./run.js')).runCommand(args, io),
  },
  {
    name: 'compile',
    args: 'DIR',
    minArgs: 1,
    maxArgs: 1,
    summary: 'compile an app into one deploy bundle',
    description: "Compiles and links every route file of DIR and writes a bundle that 'rvm run FILE.rvmb' serves without the sources.",
    flags: [{ name: 'output', short: 'o', value: 'FILE.rvmb', doc: 'where to write the bundle (required)' }],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./compile.js')).compileCommand(args, io),
  },
  {
    name: 'check',
    args: '[DIR]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'report every diagnostic of an app folder (default: .); exit 1 on any error',
    description: 'Compiles and links the app without serving it and prints every error and warning with its location.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./check.js')).checkCommand(args, io),
  },
  {
    name: 'db',
    args: 'diff|apply [DIR]',
    minArgs: 1,
    maxArgs: 2,
    summary: "show (diff) or apply the schema changes of an app's records (default: .)",
    description:
      "Compares the app's types with its database (the one 'rvm run' uses: .rvm/data.sqlite, SQLITE_PATH or database.sqlite, or DATABASE_URL) and prints the plan:\n" +
      'the changes a start applies by itself, and those it withholds (a field removed, a type changed…) with their SQL.\n' +
      "'apply' makes the additive changes; withheld ones only with --allow-destructive (else it lists them and exits 1).",
    flags: [{ name: 'allow-destructive', doc: 'apply: also make withheld changes (columns and their data are dropped)' }],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./db.js')).dbCommand(args, io),
  },
  {
    name: 'routes',
    args: '[DIR]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'list the routes of an app folder (default: .) with their guards and source lines',
    description: 'Prints a table of every route of the app: method, path, guards and file:line.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./routes.js')).routesCommand(args, io),
  },
  {
    name: 'natives',
    args: '[DIR]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'list every native function with its arguments, result and description',
    description:
      'Prints every native the standard plugins register (name, arguments with their types, result type, plugin and description),\n' +
      'then their count. With DIR, the plugins listed in DIR/rvm.config.json are included. spec/natives.md holds the same list.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./natives.js')).nativesCommand(args, io),
  },
  {
    name: 'validators',
    args: '[DIR]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'list every validator with its field types, arguments and description',
    description:
      'Prints every validator the standard plugins register (name, aliases, arguments with their types, the field types it applies to,\n' +
      'its description and plugin), then their count. With DIR, the plugins listed in DIR/rvm.config.json are included.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./validators.js')).validatorsCommand(args, io),
  },
  {
    name: 'disasm',
    args: 'FILE',
    minArgs: 1,
    maxArgs: 1,
    summary: 'list the bytecode of a .rvm file, .rvmc artefact or .rvmb bundle',
    description: 'Prints one line per instruction (offset, source line, opcode, operands), with the source lines when they are at hand.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./disasm.js')).disasmCommand(args, io),
  },
  {
    name: 'openapi',
    args: '[DIR]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'print or write the OpenAPI document of an app folder (default: .)',
    description:
      'Compiles the app and prints the OpenAPI document /_app/rest-api/openapi.json serves (3.1 by default), or writes it with -o.\n' +
      'Compile errors are printed as diagnostics (exit 1).',
    flags: [
      { name: 'output', short: 'o', value: 'FILE', doc: 'write the document to FILE (a .yaml/.yml name writes YAML)' },
      { name: 'version', value: '3.1|3.0', doc: 'OpenAPI version (default 3.1)' },
      { name: 'yaml', doc: 'YAML instead of JSON' },
    ],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./openapi.js')).openapiCommand(args, io),
  },
  {
    name: 'fuzz',
    args: '[DIR]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'send generated valid and invalid requests to every validated route of an app folder (default: .)',
    description:
      "For every route with a validate {} or query {} block, sends requests built from the validators' arbitraries to the app in process:\n" +
      'valid ones must not be refused (422) nor fail (5xx), ones with one field made invalid must be refused (422).\n' +
      'Each finding is printed with a curl command that reproduces it; exit 1 if there is any. --seed repeats a run exactly.',
    flags: [
      { name: 'runs', value: 'N', doc: 'valid and invalid requests per route, each (default 100)' },
      { name: 'seed', value: 'S', doc: 'seed of the generated requests (default random; printed in the summary)' },
      { name: 'header', value: "'NAME: VALUE'", doc: 'a header sent with every request, e.g. an API key a middleware asks for' },
    ],
    run: async (args: ParsedArgs, io: CliIo) => (await import('./fuzz.js')).fuzzCommand(args, io),
  },
  {
    name: 'help',
    args: '[COMMAND]',
    minArgs: 0,
    maxArgs: 1,
    summary: 'show help for rvm or one command',
    description: 'Without a command, lists the commands; with one, shows its usage and options.',
    flags: [],
    run: async (args: ParsedArgs, io: CliIo) => helpCommand(COMMANDS, io, args.positionals[0]),
  },
];
