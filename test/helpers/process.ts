/** Runs the built gateway (`dist/src/main.js`, built by `npm test`) as a child process for a test. */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/** A gateway child process and the addresses it printed. */
export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  simUrl: string;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) once it exits. */
  exited: Promise<number | string>;
}

/** Starts `node dist/src/main.js` with `env` on top of this process's environment (no provider keys). */
export function spawnGateway(env: Record<string, string | undefined>): Promise<GatewayProcess> {
  const full: NodeJS.ProcessEnv = { ...process.env, PORT: '0', SIM_PORT: '0', GATEWAY_LOG_LEVEL: 'warn', ...env };
  for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) delete full[name]; // keep the built-in simulator
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete full[name];
  const child = spawn(process.execPath, [resolve('dist/src/main.js')], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | string>((ok) => child.once('exit', (code, signal) => ok(code ?? signal ?? 'unknown')));
  return new Promise<GatewayProcess>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`gateway did not start:\n${output}`)), 50_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const found = /gateway listening on (http:\/\/\S+) simulator (http:\/\/\S+)/.exec(output);
      if (found) { clearTimeout(timer); ok({ child, url: found[1]!, simUrl: found[2]!, output: () => output, exited }); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => { clearTimeout(timer); fail(new Error(`gateway exited (${code}):\n${output}`)); });
  });
}

/** SIGKILLs a child if it is still running and waits for it. */
export async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((ok) => child.once('exit', ok));
  child.kill('SIGKILL');
  await gone;
}
